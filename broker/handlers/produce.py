"""Produce: validate and append each partition's batches, then answer per ``acks``.

The append happens synchronously in request order; no records are decoded (batch headers and
CRCs only). The topic's timestamp policy runs first (broker/replica/message_timestamps.py: refuse
stamps too far from the leader's clock, or stamp LogAppendTime). acks=0 gets no response,
acks=1 answers after the local append, acks=all answers once the high watermark has passed
the appended batches or ``timeout_ms`` expired.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import NamedTuple

import trio

from rillet.broker.errors import SequenceGapAfterElection
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.deferred import Deferred
from rillet.broker.handlers.in_order import InOrder
from rillet.broker.handlers.txn_produce_check import unverified, wait_for_verification
from rillet.broker.handlers.unanswered import Unanswered
from rillet.broker.replica.compacted_keys import MissingKey, check_keys
from rillet.broker.replica.message_timestamps import InvalidTimestamp, apply_timestamp_policy
from rillet.broker.replica.produce_refusals import BatchSpan, ProduceRefusals, span_of
from rillet.broker.replica.replication.acks_verdict import (
    STRANDED_MESSAGE,
    acks_all_answer,
    acks_all_refusal,
)
from rillet.broker.runtime.loop_slices import TimeSlicer
from rillet.partition_store.errors import StoreError
from rillet.wire.error_codes import ErrorCode
from rillet.wire.errors import WireError
from rillet.wire.messages import (
    ProducePartitionData,
    ProducePartitionResponse,
    ProduceRequest,
    ProduceResponse,
)

log = logging.getLogger(__name__)

ACKS_ALL = -1
_VALID_ACKS = (0, 1, ACKS_ALL)
# A request for more partitions than this is appended in slices of event-loop time.
SLICE_PARTITIONS = 256
# Partitions appended between two looks at the clock (broker/runtime/loop_slices.py) in such a
# request: appends cost from microseconds to a millisecond each.
JUDGE_PARTITIONS = 16


def handle_produce(
    ctx: BrokerContext, req: ProduceRequest, refusals: ProduceRefusals | None = None
) -> ProduceResponse | Deferred[ProduceResponse] | InOrder[ProduceResponse] | Unanswered:
    """``refusals``: the connection's (broker/replica/produce_refusals.py); a batch pipelined behind
    one refused here gets the same answer rather than OUT_OF_ORDER_SEQUENCE. A request for
    more than :data:`SLICE_PARTITIONS` partitions is appended in slices, yielding to the
    event loop between them, before the connection reads its next request (InOrder);
    acks=0 requests, which must be answered at once, never are."""
    if req.acks not in _VALID_ACKS:
        return ProduceResponse(
            [
                ProducePartitionResponse(
                    p.topic, p.partition, ErrorCode.INVALID_REQUIRED_ACKS, error_message="acks"
                )
                for p in req.partitions
            ]
        )
    if len(req.partitions) > SLICE_PARTITIONS and req.acks != 0:
        return InOrder(_append_in_slices(ctx, req, refusals))
    if req.acks != 0 and unverified(ctx, req, ctx.metadata.state):
        # The connection reads no further request meanwhile: the producer's next batches
        # must not be appended before these.
        return InOrder(_append_verified(ctx, req, refusals))
    produced = _Produced()
    produced.judge(ctx, req, req.partitions, refusals)
    if req.acks == 0:
        return Unanswered(produced.failure())
    return produced.answer(ctx, req)


async def _append_verified(
    ctx: BrokerContext, req: ProduceRequest, refusals: ProduceRefusals | None
) -> ProduceResponse | Deferred[ProduceResponse]:
    """A transaction's first batches (txn_produce_check): appended once the metadata shows
    their partitions added to it, refused INVALID_TXN_STATE if it never does."""
    refused = await wait_for_verification(ctx, req)
    produced = _Produced()
    produced.judge(ctx, req, req.partitions, refusals, refused)
    return produced.answer(ctx, req)


async def _append_in_slices(
    ctx: BrokerContext, req: ProduceRequest, refusals: ProduceRefusals | None
) -> ProduceResponse | Deferred[ProduceResponse]:
    produced = _Produced()
    slicer = TimeSlicer()
    for start in range(0, len(req.partitions), JUDGE_PARTITIONS):
        await slicer.step()  # other tasks run between slices of loop time
        produced.judge(ctx, req, req.partitions[start : start + JUDGE_PARTITIONS], refusals)
    return produced.answer(ctx, req)


class _Produced:
    """The answers of one request so far, and the acks=all waits they need."""

    def __init__(self) -> None:
        self.results: list[ProducePartitionResponse] = []
        # (index in results, offset the high watermark must reach, leader epoch)
        self.waits: list[tuple[int, int, int]] = []

    def judge(
        self,
        ctx: BrokerContext,
        req: ProduceRequest,
        partitions: Sequence[ProducePartitionData],
        refusals: ProduceRefusals | None,
        refused_txn: set[int] | None = None,
    ) -> None:
        """Refuse or append each of ``partitions``; those at ``refused_txn`` indexes (of
        ``req.partitions``) are refused INVALID_TXN_STATE."""
        now = ctx.now_ms()
        acks_all = req.acks == ACKS_ALL and not ctx.faults.ack_before_high_watermark
        for i, p in enumerate(partitions):
            # Batch headers are read up front only on a connection with refusals to repeat
            # (none, nearly always): every other batch is judged without them.
            span = span_of(p.records) if refusals else None
            if refused_txn and i in refused_txn:
                message = "the partition is not in the producer's transaction (KIP-890)"
                answer = _refused(p, ErrorCode.INVALID_TXN_STATE, message)
            else:
                answer = _answer(ctx, req, p, span, refusals, now)
            if refusals is not None:
                if answer.error_code == ErrorCode.NONE:
                    refusals.settled(p.topic, p.partition, span)
                else:
                    refused = span if span is not None else span_of(p.records)
                    refusals.refused(p.topic, p.partition, refused, answer.error_code)
            self.results.append(answer.response)
            if answer.waits_for is not None and acks_all:
                self.waits.append((len(self.results) - 1, *answer.waits_for))

    def failure(self) -> str | None:
        """Which partitions failed and why, for an acks=0 request (None: none did)."""
        errors = [f"{r.topic}-{r.partition}: {r.error_code}" for r in self.results if r.error_code]
        return f"acks=0 produce failed ({', '.join(errors)})" if errors else None

    def answer(
        self, ctx: BrokerContext, req: ProduceRequest
    ) -> ProduceResponse | Deferred[ProduceResponse]:
        if not self.waits:
            return ProduceResponse(self.results)
        timeout_ms = min(max(req.timeout_ms, 0), ctx.config.limits.max_produce_timeout_ms)
        return _await_high_watermarks(ctx, self.results, self.waits, timeout_ms)


class _Answer(NamedTuple):
    """One partition's answer before any acks=all wait; ``waits_for``: (offset the high
    watermark must reach, leader epoch of the append) once appended."""

    response: ProducePartitionResponse
    waits_for: tuple[int, int] | None = None

    @property
    def error_code(self) -> ErrorCode:
        return ErrorCode(self.response.error_code)


def _refused(p: ProducePartitionData, code: ErrorCode, message: str) -> _Answer:
    return _Answer(ProducePartitionResponse(p.topic, p.partition, code, error_message=message))


def _answer(
    ctx: BrokerContext,
    req: ProduceRequest,
    p: ProducePartitionData,
    span: BatchSpan | None,
    refusals: ProduceRefusals | None,
    now: int,
) -> _Answer:
    """Refuse ``p`` or append it to the partition this node leads."""
    if refusals is not None:
        behind = refusals.behind_refused(p.topic, p.partition, span)
        if behind is not None:
            return _refused(
                p, behind, f"an earlier batch of this producer was refused ({behind.name})"
            )
    replica = ctx.leader_replica(p.topic, p.partition)
    if isinstance(replica, ErrorCode):
        return _refused(p, replica, f"{p.topic}-{p.partition}: {replica.name}")
    if replica.stranded:  # any acks: a write here may be truncated once the cut heals
        return _refused(p, ErrorCode.NOT_LEADER_OR_FOLLOWER, STRANDED_MESSAGE)
    if req.acks == ACKS_ALL:
        refusal = acks_all_refusal(replica)
        if refusal is not None:
            return _refused(p, *refusal)
    try:
        check_keys(p.records, replica.config)
        records = apply_timestamp_policy(p.records, replica.config, now)
        info = replica.append_as_leader(records, now, ctx.steady_ms())
    except InvalidTimestamp as exc:
        return _refused(p, ErrorCode.INVALID_TIMESTAMP, str(exc))
    except MissingKey as exc:
        return _Answer(
            ProducePartitionResponse(
                p.topic,
                p.partition,
                ErrorCode.INVALID_RECORD,
                error_message=str(exc),
                invalid_records=exc.indexes,
            )
        )
    except SequenceGapAfterElection as exc:
        return _refused(p, ErrorCode.NOT_LEADER_OR_FOLLOWER, str(exc))
    except (StoreError, WireError) as exc:
        return _Answer(_append_error(p.topic, p.partition, exc))
    except OSError as exc:
        log.error("append to %s failed: %s", replica.key, exc)
        return _refused(p, ErrorCode.STORAGE_ERROR, str(exc))
    response = ProducePartitionResponse(
        p.topic,
        p.partition,
        ErrorCode.NONE,
        info.first_offset,
        now if replica.config.log_append_time else -1,
        replica.log.log_start_offset,
    )
    return _Answer(response, (info.last_offset + 1, replica.leader_epoch))


async def _await_high_watermarks(
    ctx: BrokerContext,
    results: list[ProducePartitionResponse],
    waits: list[tuple[int, int, int]],
    timeout_ms: int,
) -> ProduceResponse:
    reached: set[int] = set()
    with trio.move_on_after(timeout_ms / 1000):
        for index, target, leader_epoch in waits:
            r = results[index]
            replica = ctx.replicas.get(r.topic, r.partition)
            if replica is not None and await replica.wait_for_high_watermark(target, leader_epoch):
                reached.add(index)
    final = list(results)
    for index, target, leader_epoch in waits:
        r = results[index]
        replica = ctx.replicas.get(r.topic, r.partition)
        code, message = acks_all_answer(replica, target, leader_epoch, index in reached)
        if code == ErrorCode.NONE:
            continue
        final[index] = ProducePartitionResponse(r.topic, r.partition, code, error_message=message)
    return ProduceResponse(final)


def _append_error(topic: str, partition: int, exc: Exception) -> ProducePartitionResponse:
    """A refused append: the store's error names its code; a record set the wire codec
    cannot read is CORRUPT_MESSAGE."""
    code = exc.error_code if isinstance(exc, StoreError) else ErrorCode.CORRUPT_MESSAGE
    return ProducePartitionResponse(topic, partition, code, error_message=str(exc))
