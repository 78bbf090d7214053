"""OffsetForLeaderEpoch: where an epoch ended in this leader's log (consumers' offset
validation after a leader change). A stale or future ``current_leader_epoch`` is refused
like Kafka does, so the client refreshes its metadata first."""

from __future__ import annotations

from rillet.broker.handlers.context import BrokerContext
from rillet.wire.error_codes import ErrorCode
from rillet.wire.leader_epoch_messages import (
    EpochEndOffset,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)


def handle_offset_for_leader_epoch(
    ctx: BrokerContext, req: OffsetForLeaderEpochRequest
) -> OffsetForLeaderEpochResponse:
    out = []
    for q in req.partitions:
        replica = ctx.leader_replica(q.topic, q.partition)
        if isinstance(replica, ErrorCode):
            out.append(EpochEndOffset(q.topic, q.partition, replica))
        elif 0 <= q.current_leader_epoch < replica.leader_epoch:
            out.append(EpochEndOffset(q.topic, q.partition, ErrorCode.FENCED_LEADER_EPOCH))
        elif q.current_leader_epoch > replica.leader_epoch:
            out.append(EpochEndOffset(q.topic, q.partition, ErrorCode.UNKNOWN_LEADER_EPOCH))
        else:
            epoch, end = replica.log.end_offset_for_epoch(q.leader_epoch)
            out.append(EpochEndOffset(q.topic, q.partition, ErrorCode.NONE, epoch, end))
    return OffsetForLeaderEpochResponse(out)
