"""DeleteRecords: move partitions' log start offsets forward (Kafka's api 21).

Records below the new log start are no longer served (a fetch there is OFFSET_OUT_OF_RANGE)
and their segments are removed by the next retention pass. Sent to each partition's leader,
which answers once every in-sync replica has moved its own log start: the deletion then
survives a leader change.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.wire.request import Request

TO_HIGH_WATERMARK = -1  # an offset of -1 deletes every committed record


@dataclass(frozen=True, slots=True)
class DeleteRecordsPartition:
    topic: str
    partition: int
    offset: int  # the new log start; -1: the high watermark


@dataclass(frozen=True, slots=True)
class DeleteRecordsRequest(Request["DeleteRecordsResponse"]):
    partitions: list[DeleteRecordsPartition]
    timeout_ms: int = 30_000


@dataclass(frozen=True, slots=True)
class DeleteRecordsPartitionResponse:
    """``low_watermark``: the log start every in-sync replica has reached (-1 on error)."""

    topic: str
    partition: int
    error_code: int
    low_watermark: int = -1


@dataclass(frozen=True, slots=True)
class DeleteRecordsResponse:
    partitions: list[DeleteRecordsPartitionResponse]
