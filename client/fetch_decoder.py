"""Turning a fetched record set into ConsumerRecords.

The node returns whole batches, so the first one may begin before the fetch position; its
earlier records are skipped here. Every batch's CRC is checked first when asked to (the
default), so a corrupted fetch becomes a CorruptMessageError, never wrong data.
"""

from __future__ import annotations

from rillet.client.errors import CorruptMessageError
from rillet.client.types import ConsumerRecord
from rillet.wire.batch import HEADER_SIZE, iter_batches
from rillet.wire.compression import decompress
from rillet.wire.errors import WireError
from rillet.wire.record_codec import decode_payload

_UNLIMITED = 1 << 62
_new = tuple.__new__
_RECORD = ConsumerRecord


def decode_record_set(
    data: bytes | memoryview,
    topic: str,
    partition: int,
    fetch_offset: int,
    check_crcs: bool,
) -> tuple[list[ConsumerRecord], int]:
    """Records at or after ``fetch_offset`` and the offset after the last whole batch."""
    records: list[ConsumerRecord] = []
    next_offset = fetch_offset
    try:
        for view in iter_batches(data, _UNLIMITED, verify_crc=check_crcs):
            h = view.header
            if h.next_offset <= fetch_offset:
                continue
            start = view.position + HEADER_SIZE
            payload = decompress(h.compression, data[start : view.position + h.size])
            raw = decode_payload(payload, h.record_count)
            base = h.base_offset
            ts = h.first_timestamp_ms
            skip = fetch_offset - base if base < fetch_offset else 0
            # tuple.__new__ directly: the NamedTuple's own __new__ is a Python frame per record.
            append = records.append
            offset = base + skip
            for delta, key, value, headers in raw[skip:] if skip else raw:
                append(
                    _new(_RECORD, (topic, partition, offset, ts + delta, key, value, headers or []))
                )
                offset += 1
            next_offset = h.next_offset
    except WireError as exc:
        raise CorruptMessageError(f"{topic}-{partition} at offset {next_offset}: {exc}") from exc
    return records, next_offset
