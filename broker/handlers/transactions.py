"""Transaction apis (docs/transactions.md). The coordinator is the controller, as for groups:
FindCoordinator (key type 1) names it, and requests that change a transaction are answered
NOT_COORDINATOR anywhere else. Decisions are the pure core's (metadata_quorum.txn_coordinator),
committed to the metadata log before the answer leaves.

AddPartitionsToTxn with ``verify_only`` (KIP-890) and the partition leaders' check before a
transaction's first batch read the committed registry of the node asked: every node holds it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol, TypeVar

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller, refused_auth
from rillet.broker.handlers.deferred import Deferred
from rillet.metadata_quorum import txn_coordinator as tc
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.features import TRANSACTIONS, refusal_below
from rillet.metadata_quorum.state import MetadataState
from rillet.metadata_quorum.txn_offset_fencing import txn_commit_member_error
from rillet.metadata_quorum.txn_registry import TxnOffset, TxnPartition, TxnRegistry, TxnState
from rillet.wire import transaction_messages as tm
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import InitProducerIdRequest, InitProducerIdResponse

# The coordinator's limits: Kafka's defaults until they are node settings.
TXN_CONFIG = tc.TxnConfig()


def _decision(answer: tc.TxnAnswer) -> Decision:
    return Decision(list(answer.records), answer.error)


async def _decide(
    ctx: BrokerContext, decide: Callable[[MetadataState, int], tc.TxnAnswer]
) -> ErrorCode:
    """Run a transaction decision on the controller; NOT_COORDINATOR when it is elsewhere."""

    def run(ctl: Controller, state: MetadataState, now_ms: int) -> Decision:
        return _decision(decide(state, now_ms))

    outcome = await decide_on_controller(ctx, run)
    return outcome.group_error


A = TypeVar("A")  # the one argument a transaction decision takes besides the producer


class _ProducerRequest(Protocol):
    @property
    def transactional_id(self) -> str: ...
    @property
    def producer_id(self) -> int: ...
    @property
    def producer_epoch(self) -> int: ...


async def _decide_for(
    ctx: BrokerContext,
    req: _ProducerRequest,
    decide: Callable[[TxnRegistry, str, int, int, A, int], tc.TxnAnswer],
    arg: A,
) -> ErrorCode:
    """A decision on the producer's transaction: ``decide(registry, transactional id,
    producer id, epoch, arg, now_ms)``."""
    return await _decide(
        ctx,
        lambda state, now: decide(
            state.transactions,
            req.transactional_id,
            req.producer_id,
            req.producer_epoch,
            arg,
            now,
        ),
    )


def _parts(partitions: list[tm.TxnTopicPartition]) -> list[TxnPartition]:
    return [TxnPartition(p.topic, p.partition) for p in partitions]


def handle_txn_init_producer_id(
    ctx: BrokerContext, req: InitProducerIdRequest
) -> InitProducerIdResponse | Deferred[InitProducerIdResponse]:
    if not ctx.metadata.controller_is_local():
        return InitProducerIdResponse(ErrorCode.NOT_COORDINATOR)
    # Transaction records are of the feature level that brings them: a node of the
    # previous release could not apply them (metadata_quorum/features.py).
    refusal = refusal_below(ctx.metadata.state, TRANSACTIONS, "transactions")
    if refusal is not None:
        return InitProducerIdResponse(ErrorCode.UNSUPPORTED_VERSION, error_message=refusal)
    return _init_producer_id(ctx, req)


async def _init_producer_id(
    ctx: BrokerContext, req: InitProducerIdRequest
) -> InitProducerIdResponse:
    txn_id = req.transactional_id or ""
    expected = (req.producer_id, req.producer_epoch) if req.producer_id >= 0 else None
    code = await _decide(
        ctx,
        lambda state, now: tc.init_producer_id(
            state.transactions,
            TXN_CONFIG,
            txn_id,
            req.transaction_timeout_ms,
            now,
            state.next_producer_id,
            expected,
        ),
    )
    record = ctx.metadata.state.transactions.get(txn_id)
    if code != ErrorCode.NONE or record is None:
        return InitProducerIdResponse(code)
    return InitProducerIdResponse(ErrorCode.NONE, record.producer_id, record.producer_epoch)


def handle_add_partitions_to_txn(
    ctx: BrokerContext, req: tm.AddPartitionsToTxnRequest
) -> tm.AddPartitionsToTxnResponse | Deferred[tm.AddPartitionsToTxnResponse]:
    if req.verify_only:
        verdicts = tc.verify_partitions(
            ctx.metadata.state.transactions,
            req.transactional_id,
            req.producer_id,
            req.producer_epoch,
            _parts(req.partitions),
        )
        return tm.AddPartitionsToTxnResponse(
            ErrorCode.NONE,
            [tm.TxnPartitionResult(p.topic, p.partition, c) for p, c in verdicts.items()],
        )
    if not ctx.metadata.controller_is_local():
        return _every_partition(req, ErrorCode.NOT_COORDINATOR)
    return _add_partitions(ctx, req)


def _every_partition(
    req: tm.AddPartitionsToTxnRequest, code: ErrorCode
) -> tm.AddPartitionsToTxnResponse:
    return tm.AddPartitionsToTxnResponse(
        code, [tm.TxnPartitionResult(p.topic, p.partition, code) for p in req.partitions]
    )


async def _add_partitions(
    ctx: BrokerContext, req: tm.AddPartitionsToTxnRequest
) -> tm.AddPartitionsToTxnResponse:
    unknown = [p for p in req.partitions if not ctx.metadata.has_partition(p.topic, p.partition)]
    if unknown:
        return tm.AddPartitionsToTxnResponse(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            [
                tm.TxnPartitionResult(
                    p.topic,
                    p.partition,
                    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if p in unknown else ErrorCode.NONE,
                )
                for p in req.partitions
            ],
        )
    code = await _decide_for(ctx, req, tc.add_partitions, _parts(req.partitions))
    return _every_partition(req, code)


def handle_end_txn(
    ctx: BrokerContext, req: tm.EndTxnRequest
) -> tm.EndTxnResponse | Deferred[tm.EndTxnResponse]:
    if not ctx.metadata.controller_is_local():
        return tm.EndTxnResponse(ErrorCode.NOT_COORDINATOR)
    return _end_txn(ctx, req)


async def _end_txn(ctx: BrokerContext, req: tm.EndTxnRequest) -> tm.EndTxnResponse:
    code = await _decide_for(ctx, req, tc.end_txn, req.committed)
    return tm.EndTxnResponse(code)


def handle_txn_markers_written(
    ctx: BrokerContext, req: tm.TxnMarkersWrittenRequest
) -> tm.TxnMarkersWrittenResponse | Deferred[tm.TxnMarkersWrittenResponse]:
    refusal = refused_auth(ctx, req.cluster_id, req.auth)
    if refusal is not None:
        return tm.TxnMarkersWrittenResponse(ErrorCode.AUTHENTICATION_FAILED, error_message=refusal)
    return _markers_written(ctx, req)


async def _markers_written(
    ctx: BrokerContext, req: tm.TxnMarkersWrittenRequest
) -> tm.TxnMarkersWrittenResponse:
    def run(ctl: Controller, state: MetadataState, now_ms: int) -> Decision:
        answer = tc.markers_written(
            state.transactions,
            req.transactional_id,
            req.producer_id,
            req.producer_epoch,
            _parts(req.partitions),
            now_ms,
            state.topic_ids,
            req.started_ms,
        )
        return _decision(answer)

    outcome = await decide_on_controller(ctx, run)
    return tm.TxnMarkersWrittenResponse(
        outcome.error, ctx.metadata.controller_id(), error_message=outcome.message
    )


def handle_add_offsets_to_txn(
    ctx: BrokerContext, req: tm.AddOffsetsToTxnRequest
) -> tm.AddOffsetsToTxnResponse | Deferred[tm.AddOffsetsToTxnResponse]:
    if not ctx.metadata.controller_is_local():
        return tm.AddOffsetsToTxnResponse(ErrorCode.NOT_COORDINATOR)
    return _add_offsets(ctx, req)


async def _add_offsets(
    ctx: BrokerContext, req: tm.AddOffsetsToTxnRequest
) -> tm.AddOffsetsToTxnResponse:
    code = await _decide_for(ctx, req, partial(tc.add_partitions, group_id=req.group_id), [])
    return tm.AddOffsetsToTxnResponse(code)


def handle_txn_offset_commit(
    ctx: BrokerContext, req: tm.TxnOffsetCommitRequest
) -> tm.TxnOffsetCommitResponse | Deferred[tm.TxnOffsetCommitResponse]:
    if not ctx.metadata.controller_is_local():
        return _every_offset(req, ErrorCode.NOT_COORDINATOR)
    return _txn_offset_commit(ctx, req)


def _every_offset(req: tm.TxnOffsetCommitRequest, code: ErrorCode) -> tm.TxnOffsetCommitResponse:
    return tm.TxnOffsetCommitResponse(
        code, [tm.TxnPartitionResult(o.topic, o.partition, code) for o in req.offsets]
    )


async def _txn_offset_commit(
    ctx: BrokerContext, req: tm.TxnOffsetCommitRequest
) -> tm.TxnOffsetCommitResponse:
    offsets = [
        TxnOffset(req.group_id, o.topic, o.partition, o.offset, o.metadata, o.leader_epoch)
        for o in req.offsets
    ]

    def decide(state: MetadataState, now_ms: int) -> tc.TxnAnswer:
        fenced = txn_commit_member_error(
            state, req.group_id, req.member_id, req.group_instance_id, req.generation
        )
        if fenced is not None:
            return tc.TxnAnswer([], fenced)
        return tc.txn_offset_commit(
            state.transactions,
            req.transactional_id,
            req.producer_id,
            req.producer_epoch,
            offsets,
            now_ms,
        )

    return _every_offset(req, await _decide(ctx, decide))


def handle_list_transactions(
    ctx: BrokerContext, req: tm.ListTransactionsRequest
) -> tm.ListTransactionsResponse:
    """From the committed registry; only the controller (the coordinator) lists any, so a
    tool asking every node sees each transaction once."""
    known = {s.kafka_name for s in TxnState}
    unknown = [f for f in req.state_filters if f not in known]
    if not ctx.metadata.controller_is_local():
        return tm.ListTransactionsResponse(ErrorCode.NONE, [], unknown)
    states = set(req.state_filters)
    pids = set(req.producer_id_filters)
    listed = [
        tm.TxnListing(t.transactional_id, t.producer_id, t.txn_state.kafka_name)
        for _, t in sorted(ctx.metadata.state.transactions.transactions.items())
        if (not states or t.txn_state.kafka_name in states) and (not pids or t.producer_id in pids)
    ]
    return tm.ListTransactionsResponse(ErrorCode.NONE, listed, unknown)


def handle_describe_transactions(
    ctx: BrokerContext, req: tm.DescribeTransactionsRequest
) -> tm.DescribeTransactionsResponse:
    local = ctx.metadata.controller_is_local()
    registry = ctx.metadata.state.transactions
    out = []
    for txn_id in req.transactional_ids:
        record = registry.get(txn_id)
        if not local:
            out.append(tm.TxnDescription(ErrorCode.NOT_COORDINATOR, txn_id))
        elif record is None:
            out.append(tm.TxnDescription(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, txn_id))
        else:
            out.append(
                tm.TxnDescription(
                    ErrorCode.NONE,
                    txn_id,
                    record.txn_state.kafka_name,
                    record.timeout_ms,
                    record.started_ms,
                    record.producer_id,
                    record.producer_epoch,
                    [tm.TxnTopicPartition(p.topic, p.partition) for p in record.partitions],
                )
            )
    return tm.DescribeTransactionsResponse(out)
