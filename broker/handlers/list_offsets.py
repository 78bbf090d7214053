"""ListOffsets: earliest (log start), latest (high watermark), the record with the largest
timestamp, or the first record at or after a time (its own offset, as Kafka answers, not
its batch's: the one batch is read and decoded, on the event loop like any fetch's read).

"Latest" is the high watermark, not the log end: a consumer must never be pointed at an
offset that is not committed yet. A new leader answers OFFSET_NOT_AVAILABLE (retriable)
until its high watermark reaches the start of its epoch, so a client never sees the end
move back across a leader change. All of a log is local here: "earliest local" is the
earliest, and "latest tiered" finds nothing (offset and timestamp -1), as on a Kafka broker
without tiered storage.
"""

from __future__ import annotations

from rillet.broker.handlers.context import BrokerContext
from rillet.partition_store.errors import StoreError
from rillet.partition_store.max_timestamp import max_timestamp_offset
from rillet.partition_store.time_lookup import offset_for_time
from rillet.wire.api import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.errors import WireError
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
        earliest = p.timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP)
        if not earliest and not replica.high_watermark_settled:
            out.append(
                ListOffsetsPartitionResponse(p.topic, p.partition, ErrorCode.OFFSET_NOT_AVAILABLE)
            )
            continue
        if earliest:
            offset, ts = replica.log.log_start_offset, -1
        elif p.timestamp == LATEST_TIMESTAMP:
            # read_committed readers end at the last stable offset (Kafka's ListOffsets).
            offset = replica.log.last_stable_offset(hw) if req.isolation_level == 1 else hw
            ts = -1
        elif p.timestamp == LATEST_TIERED_TIMESTAMP:
            offset, ts = -1, -1
        elif p.timestamp < 0 and p.timestamp != MAX_TIMESTAMP:
            out.append(
                ListOffsetsPartitionResponse(p.topic, p.partition, ErrorCode.INVALID_REQUEST)
            )
            continue
        else:
            try:
                found = (
                    max_timestamp_offset(replica.log, hw)
                    if p.timestamp == MAX_TIMESTAMP
                    else offset_for_time(replica.log, p.timestamp, hw)
                )
            except StoreError:  # the batch holding it is damaged or was just deleted
                out.append(
                    ListOffsetsPartitionResponse(p.topic, p.partition, ErrorCode.STORAGE_ERROR)
                )
                continue
            except WireError:  # its records do not decode (the CRC covers bytes, not records)
                out.append(
                    ListOffsetsPartitionResponse(p.topic, p.partition, ErrorCode.CORRUPT_MESSAGE)
                )
                continue
            offset, ts = found or (-1, -1)  # none: no committed record at or after that time
        out.append(ListOffsetsPartitionResponse(p.topic, p.partition, ErrorCode.NONE, offset, ts))
    return ListOffsetsResponse(out)
