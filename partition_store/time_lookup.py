"""ListOffsets by time: the first record at or after a time, as Kafka answers it.

The indexes find the first batch whose max timestamp reaches the time (batch granularity,
no record is decoded). Kafka names the record itself: in that batch, the first record at or
after the time (and at or after the log start). So that one batch is read and decoded, on
request; nothing is kept per record at append. A batch with no such record (its header's
max timestamp belongs to a record before the log start, or the cleaner left it empty) sends
the search on to the next batch.
"""

from __future__ import annotations

from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import decode_records, read_header


def first_record_at_time(
    batch: bytes, timestamp_ms: int, from_offset: int
) -> tuple[int, int] | None:
    """``(offset, timestamp)`` of the first record of ``batch`` (one whole, checked batch)
    at or after ``from_offset`` whose timestamp is at least ``timestamp_ms``, or None."""
    for record in decode_records(batch):
        if record.offset >= from_offset and record.timestamp_ms >= timestamp_ms:
            return record.offset, record.timestamp_ms
    return None


def offset_for_time(
    log: PartitionLog, timestamp_ms: int, below_offset: int
) -> tuple[int, int] | None:
    """``(offset, timestamp)`` of the first record at or after ``timestamp_ms``, or None when
    there is none below ``below_offset`` (the high watermark: an uncommitted record is never
    pointed at). Reads one batch, more only when a batch's header promises a record it has
    not (see the module docstring); every step moves past a batch, so the search ends."""
    from_offset = log.log_start_offset
    while True:
        found = log.offset_for_timestamp(timestamp_ms, from_offset)
        if found is None or found[0] >= below_offset:
            return None
        data = log.read_bytes(found[0], 1)  # the whole batch (KIP-74), CRC-checked
        if not data:
            return None
        header = read_header(data)
        hit = first_record_at_time(data[: header.size], timestamp_ms, from_offset)
        if hit is not None:
            return hit if hit[0] < below_offset else None
        from_offset = header.next_offset
