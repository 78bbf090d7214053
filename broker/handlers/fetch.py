"""Fetch: return whole batches below the high watermark, long-polling for ``min_bytes``.

Reads never decode records: the log returns a file region (fd, position, length) per
partition and the connection driver sends it with ``os.sendfile``. Bytes loaded from disk
are CRC-checked by the log the first time they are served (never again once verified); a
batch that fails is not served (docs/replication.md, "Damaged replicas"). Each region holds its own
duplicated fd, so deleting a segment or a topic while the response is in flight is safe.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

import trio

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.replica_fetch import (
    hold_region,
    read_for_follower,
    refused_follower,
    throttle_wait_s,
)
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replication.encoded_fetch_answer import encoded_answer
from rillet.broker.replica.replication.follower_fetch_answer import LongPoll, answers_at_once
from rillet.broker.runtime.loop_slices import TimeSlicer
from rillet.partition_store.errors import LogDamaged, OffsetOutOfRange, StoreError
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FileRegion, blob_length
from rillet.wire.messages import (
    AbortedTransaction,
    FetchPartition,
    FetchPartitionResponse,
    FetchRequest,
    FetchResponse,
)

log = logging.getLogger(__name__)

_EMPTY = b""
# A read of more partitions than this may yield to the event loop (its long poll registers
# its wake-ups before reading).
READ_SLICE_PARTITIONS = 256


ToRead = Callable[[FetchRequest, int], tuple[FetchRequest, bool]]


async def handle_session_fetch(
    ctx: BrokerContext,
    req: FetchRequest,
    to_read: ToRead,
    keeps: Callable[[FetchPartitionResponse], bool],
) -> FetchResponse:
    """A follower's fetch in a fetch session: ``req`` names every partition of the session
    (a long poll waits on all of them), and each read covers ``to_read(req, now_ms)``, the ones
    that may have news; when that leaves some for the next fetch, the answer does not wait
    (replication.fetch_session). The answer has the entries ``keeps`` (those with news),
    encoded as they are kept (replication.encoded_fetch_answer)."""
    return await encoded_answer(await handle_fetch(ctx, req, to_read), keeps)


async def handle_fetch(
    ctx: BrokerContext,
    req: FetchRequest,
    to_read: ToRead | None = None,
) -> FetchResponse:
    if req.replica_id >= 0:
        refusal = refused_follower(ctx, req.replica_auth)
        if refusal is not None:
            log.warning("refused a fetch claiming replica %d: %s", req.replica_id, refusal)
            return FetchResponse(
                [
                    FetchPartitionResponse(
                        p.topic, p.partition, ErrorCode.AUTHENTICATION_FAILED, -1, -1, _EMPTY
                    )
                    for p in req.partitions
                ]
            )
    if req.incremental:  # the dispatcher expands a fetch session's requests: none here
        return FetchResponse([], ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
    max_wait_ms = min(max(req.max_wait_ms, 0), ctx.config.limits.max_fetch_wait_ms)
    poll = LongPoll(trio.current_time() + max_wait_ms / 1000)
    arrived_ms = ctx.steady_ms()  # a long poll re-reads; its fetch offsets date from now
    while True:
        reading, left_over = (req, False) if to_read is None else to_read(req, ctx.steady_ms())
        # A read that yields (many partitions) registers the long poll's waiters first: an
        # append to a partition already read must still wake it, not wait out the poll.
        early = _DataWaiters(ctx, req) if len(reading.partitions) > READ_SLICE_PARTITIONS else None
        try:
            if early is not None:
                await early.register_in_slices()
            response, total_bytes, has_error = await _read_once(ctx, reading, arrived_ms)
            if req.replica_id >= 0:  # bytes the leader's throttle held back go once it may
                poll.shorten_to(trio.current_time() + throttle_wait_s(ctx))
            if poll.ends(total_bytes, req.min_bytes, has_error, trio.current_time(), left_over):
                return response
            _close_regions(response)
            waiters = early if early is not None else _DataWaiters.registered(ctx, req)
            await waiters.wait(poll.deadline_s)
        finally:
            if early is not None:
                early.close()


async def _read_once(
    ctx: BrokerContext, req: FetchRequest, arrived_ms: int
) -> tuple[FetchResponse, int, bool]:
    """Read every partition of ``req``; one of more than :data:`READ_SLICE_PARTITIONS`
    partitions yields to the event loop between slices of loop time (a follower's fetch
    names thousands: read in one stretch, it held the loop for hundreds of milliseconds).
    Each partition's answer is read at once; the next may see later appends, as a later
    fetch would."""
    remaining = max(req.max_bytes, 0)
    out: list[FetchPartitionResponse] = []
    total = 0
    has_error = False
    slicer = TimeSlicer() if len(req.partitions) > READ_SLICE_PARTITIONS else None
    try:
        for p in req.partitions:
            if slicer is not None:
                await slicer.step()
            if req.replica_id >= 0:
                resp = read_for_follower(
                    ctx,
                    p,
                    req.replica_id,
                    remaining,
                    first=total == 0,
                    request_arrived_ms=arrived_ms,
                )
            else:
                resp = _read_partition(
                    ctx, p, remaining, first=total == 0, committed=req.isolation_level == 1
                )
            if answers_at_once(resp):
                has_error = True
            size = blob_length(resp.records)
            total += size
            remaining = max(remaining - size, 0)
            out.append(resp)
    except BaseException:
        _close_regions(FetchResponse(out))  # cancelled mid-read: release what it holds
        raise
    return FetchResponse(out), total, has_error


def _read_partition(
    ctx: BrokerContext, p: FetchPartition, remaining: int, first: bool, committed: bool
) -> FetchPartitionResponse:
    """A consumer's read: up to the high watermark, or with ``committed`` (read_committed)
    up to the last stable offset, with the aborted transactions of that range."""
    replica = ctx.leader_replica(p.topic, p.partition)
    if isinstance(replica, ErrorCode):
        return FetchPartitionResponse(p.topic, p.partition, replica, -1, -1, _EMPTY)
    plog = replica.log
    hw = replica.high_watermark
    lso = plog.last_stable_offset(hw)
    end = lso if committed and not ctx.faults.read_committed_past_lso else hw
    base = (p.topic, p.partition)
    if p.fetch_offset > plog.log_end_offset or p.fetch_offset < plog.log_start_offset:
        return _out_of_range(p, replica)
    limit = min(max(p.partition_max_bytes, 0), remaining)
    region = None
    if p.fetch_offset < end and (limit > 0 or first):
        try:
            # KIP-74: the first partition of a response returns at least one whole batch.
            result = plog.read(p.fetch_offset, limit, max_offset=end, min_one_batch=first)
            if result.region is not None and result.region.length > 0:
                region = hold_region(result.region)  # reads small regions now
        except OffsetOutOfRange:
            return _out_of_range(p, replica)
        except LogDamaged as exc:
            # Bit rot: never served. The replica hands its leadership over (or, as the only
            # in-sync copy, keeps refusing this range) and is repaired from a healthy one.
            replica.report_damage(exc.damage)
            code = replica.damaged_read_error()
            return FetchPartitionResponse(
                p.topic, p.partition, code, hw, plog.log_start_offset, _EMPTY
            )
        except (StoreError, OSError) as exc:
            # A damaged segment fails its own partition, not the whole fetch.
            log.error("read of %s-%d failed: %s", p.topic, p.partition, exc)
            return FetchPartitionResponse(
                p.topic, p.partition, ErrorCode.STORAGE_ERROR, hw, plog.log_start_offset, _EMPTY
            )
        if region is not None:
            replica.bytes_out += blob_length(region)  # consumer bytes out, for /metrics
    aborted = []
    if committed and region is not None:
        aborted = [
            AbortedTransaction(a.producer_id, a.first_offset)
            for a in plog.aborted_transactions(p.fetch_offset, end)
        ]
    return FetchPartitionResponse(
        *base,
        ErrorCode.NONE,
        hw,
        plog.log_start_offset,
        region if region is not None else _EMPTY,
        log_end_offset=plog.log_end_offset,
        leader_epoch=replica.leader_epoch,
        last_stable_offset=lso,
        aborted_transactions=aborted,
    )


def _out_of_range(p: FetchPartition, replica: PartitionReplica) -> FetchPartitionResponse:
    plog = replica.log
    return FetchPartitionResponse(
        p.topic,
        p.partition,
        ErrorCode.OFFSET_OUT_OF_RANGE,
        replica.high_watermark,
        plog.log_start_offset,
        _EMPTY,
        log_end_offset=plog.log_end_offset,
        leader_epoch=replica.leader_epoch,
    )


class _DataWaiters:
    """One long poll's wake-up: an event every partition of the fetch sets on news."""

    def __init__(self, ctx: BrokerContext, req: FetchRequest) -> None:
        self._ctx = ctx
        self._req = req
        self._event = trio.Event()
        self._replicas: list[PartitionReplica] = []

    @classmethod
    def registered(cls, ctx: BrokerContext, req: FetchRequest) -> _DataWaiters:
        waiters = cls(ctx, req)
        for p in req.partitions:
            waiters._register(p)
        return waiters

    async def register_in_slices(self) -> None:
        """Register on every partition of the fetch, yielding between slices of loop time
        (a follower's session names thousands); :meth:`close` releases what was
        registered if this is cancelled midway."""
        slicer = TimeSlicer()
        for p in self._req.partitions:
            await slicer.step()
            self._register(p)

    def _register(self, p: FetchPartition) -> None:
        replica = self._ctx.replicas.get(p.topic, p.partition)
        if replica is not None:
            replica.register_waiter(self._event, follower=self._req.replica_id >= 0)
            self._replicas.append(replica)

    async def wait(self, deadline: float) -> None:
        """Until a partition has news (at once if one had since registration) or the
        deadline; then unregistered."""
        try:
            with trio.move_on_at(deadline):
                await self._event.wait()
        finally:
            self.close()

    def close(self) -> None:
        replicas, self._replicas = self._replicas, []
        for replica in replicas:
            replica.unregister_waiter(self._event)


def _close_regions(response: FetchResponse) -> None:
    for p in response.partitions:
        if isinstance(p.records, FileRegion):
            os.close(p.records.fd)
