"""Record and batch codecs: byte-exact encoding, round trips, and rejection of damage."""

from __future__ import annotations

import struct

import cbor2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.wire.batch import (
    MAGIC,
    assign_offset_and_epoch,
    build_batch,
    check_batch,
    decode_records,
    iter_batches,
    valid_prefix,
)
from rillet.wire.compression import Compression, decompress
from rillet.wire.errors import CorruptBatch, UnsupportedCompression
from rillet.wire.record_codec import decode_payload, encode_record

MAX = 1 << 24
sizes = st.sampled_from([0, 1, 23, 24, 255, 256, 1000, 65535, 65536])
blobs = st.one_of(st.none(), st.binary(max_size=300), sizes.map(lambda n: b"z" * n))
headers = st.one_of(
    st.none(), st.lists(st.tuples(st.text(max_size=10), st.binary(max_size=20)), max_size=3)
)
deltas = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@settings(max_examples=400, deadline=None)
@given(delta=deltas, key=blobs, value=blobs, hdrs=headers)
def test_hand_encoding_equals_cbor2(
    delta: int, key: bytes | None, value: bytes | None, hdrs: list[tuple[str, bytes]] | None
) -> None:
    encoded = encode_record(delta, key, value, hdrs)
    as_lists = [list(h) for h in hdrs] if hdrs else None  # empty headers encode as null
    assert encoded == cbor2.dumps([delta, key, value, as_lists])
    (decoded,) = decode_payload(b"\x81" + encoded, 1)
    assert decoded[:3] == [delta, key, value]
    assert decoded[3] == (list(map(tuple, hdrs)) if hdrs else None)


records = st.lists(
    st.tuples(st.integers(min_value=0, max_value=2**40), blobs, blobs, headers),
    min_size=1,
    max_size=20,
)


@settings(max_examples=200, deadline=None)
@given(recs=records, codec=st.sampled_from(list(Compression)), base=st.integers(0, 2**40))
def test_batch_round_trip_and_in_place_offsets(
    recs: list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes]] | None]],
    codec: Compression,
    base: int,
) -> None:
    data = bytearray(build_batch(recs, codec))
    assign_offset_and_epoch(data, 0, base, 9)
    header = check_batch(data, 0, len(data), MAX)  # CRC still valid after assignment
    assert header.leader_epoch == 9 and header.magic == MAGIC
    got = decode_records(data)
    first_ts = recs[0][0]
    assert [r.offset for r in got] == list(range(base, base + len(recs)))
    assert [(r.timestamp_ms - first_ts) for r in got] == [ts - first_ts for ts, *_ in recs]
    assert [(r.key, r.value, r.headers) for r in got] == [
        (k, v, list(map(tuple, h or []))) for _, k, v, h in recs
    ]


@settings(max_examples=200, deadline=None)
@given(recs=records, cut=st.floats(0, 1), flip=st.booleans(), bit=st.integers(0, 7))
def test_every_truncation_and_bit_flip_is_detected(
    recs: list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes]] | None]],
    cut: float,
    flip: bool,
    bit: int,
) -> None:
    data = bytearray(build_batch(recs))
    if flip:
        i = 17 + int(cut * (len(data) - 18))  # magic excluded; crc and everything after it
        data[i] ^= 1 << bit
    else:
        data = data[: int(cut * (len(data) - 1))]
    with pytest.raises(CorruptBatch):
        check_batch(data, 0, len(data), MAX)


def test_valid_prefix_stops_at_the_first_damaged_batch() -> None:
    batches = [build_batch([(i, None, bytes([i]) * 50, None)]) for i in range(5)]
    joined = bytearray(b"".join(batches))
    assert valid_prefix(joined, MAX)[0] == len(joined)
    at = len(batches[0]) + len(batches[1]) + 30
    joined[at] ^= 0x40
    length, views = valid_prefix(joined, MAX)
    assert length == len(batches[0]) + len(batches[1]) and len(views) == 2
    assert [v.position for v in iter_batches(joined[:length], MAX)] == [0, len(batches[0])]


def test_structural_checks() -> None:
    data = bytearray(build_batch([(1, None, b"x", None), (2, None, b"y", None)]))
    too_big = check_batch
    with pytest.raises(CorruptBatch, match="exceeds"):
        too_big(data, 0, len(data), 50)
    bad_count = bytearray(data)
    struct.pack_into(">i", bad_count, 57, 5)
    with pytest.raises(CorruptBatch):
        check_batch(bad_count, 0, len(bad_count), MAX, verify_crc=False)
    tiny = bytearray(data)
    struct.pack_into(">i", tiny, 8, 3)
    with pytest.raises(CorruptBatch, match="too small"):
        check_batch(tiny, 0, len(tiny), MAX)


def test_decompress_rejects_garbage_and_unknown_codecs() -> None:
    with pytest.raises(CorruptBatch):
        decompress(Compression.ZLIB, b"not zlib at all")
    with pytest.raises(UnsupportedCompression):
        decompress(5, b"")


def test_decode_payload_rejects_wrong_shapes() -> None:
    for bad in (
        cbor2.dumps({"a": 1}),
        cbor2.dumps([[1, None]]),
        cbor2.dumps([[1, 2, b"", None]]),
        cbor2.dumps([[1, None, b"", [["k", "not bytes"]]]]),
        b"\xff\xfe",
    ):
        with pytest.raises(CorruptBatch):
            decode_payload(bad, 1)
    with pytest.raises(CorruptBatch):
        decode_payload(cbor2.dumps([[1, None, b"", None]]), 2)
