"""Decoding fetched record sets: skipping, truncated tails, CRC checks, codecs."""

from __future__ import annotations

import struct

import pytest

from rillet.client.errors import CorruptMessageError
from rillet.client.fetch_decoder import decode_record_set
from rillet.wire.batch import (
    ATTR_CONTROL,
    ATTR_TRANSACTIONAL,
    build_batch,
    encode_batch_from_payload,
)
from rillet.wire.compression import Compression
from rillet.wire.record_codec import encode_record


def batch_at(base: int, values: list[bytes], compression: Compression = Compression.NONE) -> bytes:
    raw = bytearray(
        build_batch([(1000 + i, None, v, None) for i, v in enumerate(values)], compression)
    )
    struct.pack_into(">q", raw, 0, base)
    return bytes(raw)


def test_records_below_the_fetch_offset_are_skipped() -> None:
    data = batch_at(0, [b"a", b"b", b"c"]) + batch_at(3, [b"d", b"e"])
    records, next_offset = decode_record_set(memoryview(data), "t", 2, 2, True)
    assert [(r.offset, r.value) for r in records] == [(2, b"c"), (3, b"d"), (4, b"e")]
    assert next_offset == 5
    r = records[0]
    assert (r.topic, r.partition, r.timestamp_ms, r.key, r.headers) == ("t", 2, 1002, None, ())
    records, next_offset = decode_record_set(data, "t", 2, 4, True)
    assert [r.offset for r in records] == [4] and next_offset == 5


def test_keys_headers_and_compression() -> None:
    raw = bytearray(build_batch([(7, b"k", b"v", [("h", b"1")])], Compression.SNAPPY))
    records, _ = decode_record_set(bytes(raw), "t", 0, 0, True)
    assert (records[0].key, records[0].value, records[0].headers) == (b"k", b"v", [("h", b"1")])


def test_a_truncated_last_batch_waits_for_the_next_fetch() -> None:
    whole = batch_at(0, [b"a"])
    cut = batch_at(1, [b"b" * 50])[:-10]
    records, next_offset = decode_record_set(whole + cut, "t", 0, 0, True)
    assert [r.value for r in records] == [b"a"] and next_offset == 1
    assert decode_record_set(cut, "t", 0, 1, True) == ([], 1)


def test_corruption_is_detected_when_checking_crcs() -> None:
    data = bytearray(batch_at(0, [b"hello"]))
    data[-3] ^= 0xFF  # inside the payload
    with pytest.raises(CorruptMessageError, match="t-0"):
        decode_record_set(bytes(data), "t", 0, 0, True)
    garbage = bytes(12) + b"\x00" * 60
    with pytest.raises(CorruptMessageError):
        decode_record_set(garbage, "t", 0, 0, False)


def test_control_batches_are_skipped_and_fetching_moves_past_them() -> None:
    """A transaction marker a Kafka client wrote: no data records, but its offset counts."""
    marker = bytearray(
        encode_batch_from_payload(
            encode_record(0, 0, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00", None),
            record_count=1,
            first_timestamp_ms=1000,
            max_timestamp_ms=1000,
            attributes=ATTR_CONTROL | ATTR_TRANSACTIONAL,
        )
    )
    struct.pack_into(">q", marker, 0, 2)
    data = batch_at(0, [b"a", b"b"]) + bytes(marker) + batch_at(3, [b"c", b"d"])
    records, next_offset = decode_record_set(data, "t", 0, 0, True)
    assert [(r.offset, r.value) for r in records] == [(0, b"a"), (1, b"b"), (3, b"c"), (4, b"d")]
    assert next_offset == 5
    only_marker, next_offset = decode_record_set(bytes(marker), "t", 0, 2, True)
    assert only_marker == [] and next_offset == 3
