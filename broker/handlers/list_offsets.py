"""ListOffsets: earliest (log start), latest (high watermark) or the first offset at a time.

"Latest" is the high watermark, not the log end: a consumer must never be pointed at an
offset that is not committed yet. A new leader answers OFFSET_NOT_AVAILABLE (retriable)
until its high watermark reaches the start of its epoch, so a client never sees the end
move back across a leader change.
"""

from __future__ import annotations

from rillet.broker.handlers.context import BrokerContext
from rillet.wire.api import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
)


def handle_list_offsets(ctx: BrokerContext, req: ListOffsetsRequest) -> ListOffsetsResponse:
    out = []
    for p in req.partitions:
        replica = ctx.leader_replica(p.topic, p.partition)
        if isinstance(replica, ErrorCode):
            out.append(ListOffsetsPartitionResponse(p.topic, p.partition, replica))
            continue
        hw = replica.high_watermark
        if p.timestamp != EARLIEST_TIMESTAMP and not replica.high_watermark_settled:
            out.append(
                ListOffsetsPartitionResponse(p.topic, p.partition, ErrorCode.OFFSET_NOT_AVAILABLE)
            )
            continue
        if p.timestamp == EARLIEST_TIMESTAMP:
            offset, ts = replica.log.log_start_offset, -1
        elif p.timestamp == LATEST_TIMESTAMP:
            offset, ts = hw, -1
        elif p.timestamp < 0:
            out.append(
                ListOffsetsPartitionResponse(p.topic, p.partition, ErrorCode.INVALID_REQUEST)
            )
            continue
        else:
            found = replica.log.offset_for_timestamp(p.timestamp)
            if found is None or found[0] >= hw:
                offset, ts = -1, -1  # no committed record at or after that time
            else:
                offset, ts = found
        out.append(ListOffsetsPartitionResponse(p.topic, p.partition, ErrorCode.NONE, offset, ts))
    return ListOffsetsResponse(out)
