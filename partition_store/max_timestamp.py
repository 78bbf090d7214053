"""The record with a log's largest timestamp: ListOffsets' "max timestamp" (-3, KIP-734).

Kafka's semantics: the first segment holding the largest timestamp, the first batch in it
with that timestamp, and in that batch the first record carrying it (the batch's base
offset when the topic stamps log-append time: every record then has the batch's time).
Only the one batch is read and decoded, on request: nothing is kept per record at append.
"""

from __future__ import annotations

from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import decode_records, read_header


def offset_of_max_timestamp(batch: bytes) -> tuple[int, int]:
    """``(offset, timestamp)`` of the first record of ``batch`` (one whole, checked batch)
    whose timestamp is the batch's max timestamp."""
    header = read_header(batch)
    for record in decode_records(batch):
        if record.timestamp_ms == header.max_timestamp_ms:
            return record.offset, record.timestamp_ms
    return header.base_offset, header.max_timestamp_ms  # a header disagreeing with its records


def max_timestamp_offset(log: PartitionLog, below_offset: int) -> tuple[int, int] | None:
    """``(offset, timestamp)`` of the record with the log's largest timestamp, or None when
    the log is empty or that record is not below ``below_offset`` (the high watermark: an
    uncommitted record is never pointed at). An offset before the log start is raised to it.
    """
    found = log.max_timestamp_batch()
    if found is None:
        return None
    start = log.log_start_offset
    data = log.read_bytes(max(found[0], start), 1)  # the whole batch (KIP-74), CRC-checked
    if not data:
        return None
    offset, timestamp_ms = offset_of_max_timestamp(data[: read_header(data).size])
    offset = max(offset, start)
    return (offset, timestamp_ms) if offset < below_offset else None
