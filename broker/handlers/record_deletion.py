"""DeleteRecords: move a partition's log start forward, on its leader.

Only committed records may be deleted (an offset above the high watermark is
OFFSET_OUT_OF_RANGE; -1 means the high watermark). The leader moves its own log start at
once, durably, and answers when every in-sync replica has moved its own (each reports it in
its next fetch; the leader wakes their parked fetches so that this is one round trip), so the
deletion holds whichever replica is elected next. Past the request's timeout the answer is
REQUEST_TIMED_OUT: the leader's log start has moved and the followers follow on their next
fetch, but not every in-sync replica had confirmed it. Segments wholly below the new log
start go with the next retention pass.
"""

from __future__ import annotations

import logging
from collections import Counter

import trio

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.partition_store.errors import StoreError
from rillet.wire.error_codes import ErrorCode
from rillet.wire.record_deletion_messages import (
    TO_HIGH_WATERMARK,
    DeleteRecordsPartition,
    DeleteRecordsPartitionResponse,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
)

log = logging.getLogger(__name__)

_Key = tuple[str, int]


async def handle_delete_records(
    ctx: BrokerContext, req: DeleteRecordsRequest
) -> DeleteRecordsResponse:
    counts = Counter((p.topic, p.partition) for p in req.partitions)
    answers: dict[_Key, DeleteRecordsPartitionResponse] = {}
    moved: dict[_Key, tuple[PartitionReplica, int, int]] = {}
    for p in req.partitions:
        key = (p.topic, p.partition)
        if counts[key] > 1:
            answers[key] = DeleteRecordsPartitionResponse(*key, ErrorCode.INVALID_REQUEST)
            continue
        outcome = _move_log_start(ctx, p)
        if isinstance(outcome, DeleteRecordsPartitionResponse):
            answers[key] = outcome
        else:
            moved[key] = outcome
    if moved:
        with trio.move_on_after(max(req.timeout_ms, 0) / 1000):
            async with trio.open_nursery() as nursery:
                for key, (replica, offset, epoch) in moved.items():
                    nursery.start_soon(_confirm, key, replica, offset, epoch, answers)
        for key in moved.keys() - answers.keys():
            answers[key] = DeleteRecordsPartitionResponse(*key, ErrorCode.REQUEST_TIMED_OUT)
    return DeleteRecordsResponse([answers[(p.topic, p.partition)] for p in req.partitions])


def _move_log_start(
    ctx: BrokerContext, p: DeleteRecordsPartition
) -> DeleteRecordsPartitionResponse | tuple[PartitionReplica, int, int]:
    """Move the leader's log start; the replica, the offset and the epoch to confirm them in."""
    replica = ctx.leader_replica(p.topic, p.partition)
    if isinstance(replica, ErrorCode):
        return DeleteRecordsPartitionResponse(p.topic, p.partition, replica)
    hw = replica.high_watermark
    offset = hw if p.offset == TO_HIGH_WATERMARK else p.offset
    if not 0 <= offset <= hw:
        return DeleteRecordsPartitionResponse(p.topic, p.partition, ErrorCode.OFFSET_OUT_OF_RANGE)
    before = replica.log.log_start_offset
    try:
        replica.advance_log_start(offset)
    except (StoreError, OSError) as exc:
        log.error("deleting records of %s-%d failed: %s", p.topic, p.partition, exc)
        return DeleteRecordsPartitionResponse(p.topic, p.partition, ErrorCode.STORAGE_ERROR)
    if offset > before:
        log.info("%s-%d: records below offset %d deleted", p.topic, p.partition, offset)
    return replica, offset, replica.leader_epoch


async def _confirm(
    key: _Key,
    replica: PartitionReplica,
    offset: int,
    leader_epoch: int,
    answers: dict[_Key, DeleteRecordsPartitionResponse],
) -> None:
    if await replica.wait_for_low_watermark(offset, leader_epoch):
        answers[key] = DeleteRecordsPartitionResponse(*key, ErrorCode.NONE, replica.low_watermark)
    else:
        answers[key] = DeleteRecordsPartitionResponse(*key, ErrorCode.NOT_LEADER_OR_FOLLOWER)
