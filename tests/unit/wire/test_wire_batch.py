"""Record batches (Kafka's v2 layout): round trips, in-place leader fields, validation."""

from __future__ import annotations

import struct

import crc32c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wire_helpers import (
    FIELD_NAMES,
    INT64,
    Rec,
    expected_headers,
    maybe_bytes,
    maybe_headers,
    records,
    recrc,
    set_field,
)

from rillet.wire.batch import (
    ATTR_CONTROL,
    ATTR_TIMESTAMP_LOG_APPEND,
    CRC_OFFSET,
    CRC_START,
    HEADER,
    HEADER_SIZE,
    LENGTH_PREFIX_SIZE,
    MAGIC,
    MIN_BATCH_SIZE,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    BatchBuilder,
    BatchHeader,
    assign_offset_and_epoch,
    build_batch,
    check_batch,
    decode_records,
    encode_batch_from_payload,
    iter_batches,
    peek_length,
    read_header,
    valid_prefix,
)
from rillet.wire.compression import CODEC_MASK, Compression
from rillet.wire.errors import CorruptBatch, UnsupportedCompression, WireError
from rillet.wire.record_codec import encode_record

MAX = 1 << 24
codecs = st.sampled_from(list(Compression))

# Byte ranges of each header field, from the field list in docs/storage-format.md (big-endian).
_WIDTHS = [8, 4, 4, 1, 4, 2, 4, 8, 8, 8, 2, 4, 4]
FIELD_RANGE: dict[str, range] = {}
_pos = 0
for _name, _w in zip(FIELD_NAMES, _WIDTHS, strict=True):
    FIELD_RANGE[_name] = range(_pos, _pos + _w)
    _pos += _w
# Bytes the leader owns, outside the CRC: flipping them leaves a batch valid.
UNCOVERED = set(FIELD_RANGE["base_offset"]) | set(FIELD_RANGE["leader_epoch"])


def test_header_layout_matches_the_design() -> None:
    assert HEADER_SIZE == HEADER.size == sum(_WIDTHS) == 61
    assert CRC_OFFSET == FIELD_RANGE["crc"].start == 17
    assert CRC_START == FIELD_RANGE["attributes"].start == 21
    assert LENGTH_PREFIX_SIZE == 12
    assert MIN_BATCH_SIZE == HEADER_SIZE + 1
    assert BatchHeader._fields == tuple(FIELD_NAMES)
    assert MAGIC == 2
    # The control and timestamp-type bits do not overlap the codec bits.
    assert (ATTR_CONTROL | ATTR_TIMESTAMP_LOG_APPEND) & CODEC_MASK == 0


def test_built_header_fields() -> None:
    recs: list[Rec] = [(1000, b"k", b"v", None), (990, None, b"w", None), (1500, None, None, None)]
    data = build_batch(recs, Compression.GZIP, producer_id=77, producer_epoch=3, base_sequence=12)
    h = check_batch(data, 0, len(data), MAX)
    assert h.base_offset == 0 and h.leader_epoch == -1  # the leader sets both
    assert h.batch_length == len(data) - LENGTH_PREFIX_SIZE and h.size == len(data)
    assert h.magic == MAGIC
    assert h.attributes == int(Compression.GZIP) and h.compression == Compression.GZIP
    assert h.record_count == 3 and h.last_offset_delta == 2
    assert h.first_timestamp_ms == 1000 and h.max_timestamp_ms == 1500
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == (77, 3, 12)
    assert h.crc == crc32c.crc32c(data[CRC_START:])
    assert h == read_header(data)
    assert peek_length(data) == (0, len(data))


def test_default_producer_fields() -> None:
    h = read_header(build_batch([(1, None, b"v", None)]))
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == (NO_PRODUCER_ID, -1, NO_SEQUENCE)


def test_header_properties() -> None:
    h = read_header(build_batch([(1, None, b"v", None)] * 5))._replace(base_offset=100)
    assert h.last_offset == 104 and h.next_offset == 105
    assert h._replace(attributes=ATTR_CONTROL | ATTR_TIMESTAMP_LOG_APPEND | 1).compression == 1


def _check_round_trip(
    recs: list[Rec], data: bytes | bytearray, base: int, position: int = 0
) -> None:
    got = decode_records(data, position)
    first_ts = recs[0][0]
    assert [r.offset for r in got] == list(range(base, base + len(recs)))
    assert [r.timestamp_ms for r in got] == [ts for ts, *_ in recs]
    assert [r.timestamp_ms - first_ts for r in got] == [ts - first_ts for ts, *_ in recs]
    assert [r.key for r in got] == [k for _, k, _, _ in recs]
    assert [r.value for r in got] == [v for _, _, v, _ in recs]
    assert [r.headers for r in got] == [expected_headers(h) for *_, h in recs]


@settings(max_examples=120, deadline=None)
@given(recs=records(), codec=codecs, base=st.integers(0, 2**62), epoch=st.integers(-1, 2**31 - 1))
def test_build_batch_round_trip(recs: list[Rec], codec: Compression, base: int, epoch: int) -> None:
    data = bytearray(build_batch(recs, codec))
    h = check_batch(data, 0, len(data), MAX)
    assert h.record_count == len(recs)
    assert h.first_timestamp_ms == recs[0][0]
    assert h.max_timestamp_ms == max(ts for ts, *_ in recs)
    crc_before = bytes(data[CRC_OFFSET:CRC_START])
    assign_offset_and_epoch(data, 0, base, epoch)
    h2 = check_batch(data, 0, len(data), MAX)  # CRC still valid
    assert bytes(data[CRC_OFFSET:CRC_START]) == crc_before
    assert (h2.base_offset, h2.leader_epoch) == (base, epoch)
    assert h2._replace(base_offset=0, leader_epoch=-1) == h
    _check_round_trip(recs, data, base)


@settings(max_examples=100, deadline=None)
@given(recs=records(max_size=20), codec=codecs)
def test_batch_builder_matches_build_batch_and_reference_encoding(
    recs: list[Rec], codec: Compression
) -> None:
    builder = BatchBuilder(codec, producer_id=5, producer_epoch=1, base_sequence=9)
    added = [builder.append(*r) for r in recs]
    assert len(builder) == len(recs)
    built = builder.build()
    assert built == build_batch(recs, codec, 5, 1, 9)
    # The inline fast path must produce exactly encode_record's bytes.
    first = recs[0][0]
    parts = [encode_record(i, ts - first, k, v, h) for i, (ts, k, v, h) in enumerate(recs)]
    assert added == [len(p) for p in parts]
    payload = b"".join(parts)
    if codec is Compression.NONE:
        assert built[HEADER_SIZE:] == payload
        assert len(built) == HEADER_SIZE + sum(added)
    reference = encode_batch_from_payload(
        payload if codec is Compression.NONE else built[HEADER_SIZE:],
        record_count=len(recs),
        first_timestamp_ms=first,
        max_timestamp_ms=max(ts for ts, *_ in recs),
        attributes=int(codec),
        producer_id=5,
        producer_epoch=1,
        base_sequence=9,
    )
    assert reference == built


@settings(max_examples=100, deadline=None)
@given(
    first=st.integers(0, 2**40),
    offsets=st.lists(st.integers(-(2**20), 2**20), min_size=1, max_size=10),
    key=maybe_bytes,
    value=maybe_bytes,
    headers=maybe_headers,
    codec=codecs,
)
def test_out_of_order_timestamps_round_trip(
    first: int,
    offsets: list[int],
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes]] | None,
    codec: Compression,
) -> None:
    recs: list[Rec] = [(first, key, value, headers)]
    recs += [(max(0, first + d), None, value, None) for d in offsets]
    data = build_batch(recs, codec)
    h = check_batch(data, 0, len(data), MAX)
    assert h.first_timestamp_ms == first and h.max_timestamp_ms == max(r[0] for r in recs)
    _check_round_trip(recs, data, 0)


def test_builder_size_accounting() -> None:
    b = BatchBuilder()
    start = b.size_bytes
    n = b.append(1, b"key", b"value", [("h", b"x")])
    assert b.size_bytes == start + n
    assert b.estimated_size_with(b"k" * 10, b"v" * 20) >= b.size_bytes + 30


def test_building_an_empty_batch_is_an_error() -> None:
    with pytest.raises(ValueError):
        BatchBuilder().build()
    with pytest.raises(ValueError):
        build_batch([])


@pytest.mark.parametrize(
    "timestamps",
    [[-5, 100], [-1, -1, 7], [-1000, -2000]],
    ids=["neg-then-pos", "minus-one", "all-neg"],
)
def test_negative_timestamps_are_kept_or_refused(timestamps: list[int]) -> None:
    recs: list[Rec] = [(ts, None, bytes([i]), None) for i, ts in enumerate(timestamps)]
    try:
        data = build_batch(recs)
    except ValueError:
        return  # refusing negative timestamps would be fine too
    assert [r.timestamp_ms for r in decode_records(data)] == timestamps


# -- iteration -----------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(records(max_size=4), codecs), min_size=1, max_size=6), st.data())
def test_iter_batches_over_concatenated_batches(
    specs: list[tuple[list[Rec], Compression]], data: st.DataObject
) -> None:
    buf = bytearray()
    starts, next_offset = [], 0
    for recs, codec in specs:
        starts.append(len(buf))
        batch = bytearray(build_batch(recs, codec))
        assign_offset_and_epoch(batch, 0, next_offset, 4)
        next_offset += len(recs)
        buf += batch
    # Offsets and epochs can equally be assigned in place inside the joined buffer.
    pos = data.draw(st.sampled_from(starts))
    assign_offset_and_epoch(buf, pos, read_header(buf, pos).base_offset, 5)

    views = list(iter_batches(buf, MAX))
    assert [v.position for v in views] == starts
    assert [v.header.record_count for v in views] == [len(r) for r, _ in specs]
    assert views[-1].header.next_offset == next_offset
    assert [v.header.leader_epoch for v in views] == [5 if s == pos else 4 for s in starts]
    for view, (recs, _) in zip(views, specs, strict=True):
        _check_round_trip(recs, buf, view.header.base_offset, view.position)
    assert valid_prefix(buf, MAX) == (len(buf), views)


def test_iter_batches_on_empty_buffer() -> None:
    assert list(iter_batches(b"", MAX)) == []
    assert valid_prefix(b"", MAX) == (0, [])


def test_iter_batches_raises_at_the_first_bad_batch_after_yielding_good_ones() -> None:
    a, b = build_batch([(1, None, b"a", None)]), build_batch([(2, None, b"b", None)])
    it = iter_batches(a + b[:-1], MAX)
    assert next(it).position == 0
    with pytest.raises(CorruptBatch):
        next(it)


def test_verify_crc_false_skips_only_the_crc() -> None:
    data = bytearray(build_batch([(1, None, b"payload", None)]))
    data[-2] ^= 0xFF
    with pytest.raises(CorruptBatch, match="crc"):
        check_batch(data, 0, len(data), MAX)
    assert check_batch(data, 0, len(data), MAX, verify_crc=False).record_count == 1
    assert len(list(iter_batches(data, MAX, verify_crc=False))) == 1
    data[16] = 1  # structure is still checked
    with pytest.raises(CorruptBatch, match="magic"):
        check_batch(data, 0, len(data), MAX, verify_crc=False)


# -- rejection -----------------------------------------------------------------------------------

SAMPLES = [
    build_batch([(5, b"key", b"value", [("h", b"1")]), (6, None, b"v" * 300, None)]),
    build_batch([(5, None, b"x" * 1000, None)] * 3, Compression.GZIP),
    build_batch([(0, None, None, None)]),
]


@pytest.mark.parametrize("sample", range(len(SAMPLES)))
def test_every_truncation_is_rejected(sample: int) -> None:
    data = SAMPLES[sample]
    for cut in range(len(data)):
        with pytest.raises(CorruptBatch):
            check_batch(data[:cut], 0, cut, MAX)
        # ...and the same when the buffer is whole but `available` says it ends early.
        with pytest.raises(CorruptBatch):
            check_batch(data, 0, cut, MAX)
    assert check_batch(data, 0, len(data), MAX).size == len(data)


@settings(max_examples=100, deadline=None)
@given(recs=records(max_size=6), codec=codecs, data=st.data())
def test_random_truncation_is_rejected(
    recs: list[Rec], codec: Compression, data: st.DataObject
) -> None:
    batch = build_batch(recs, codec)
    cut = data.draw(st.integers(0, len(batch) - 1))
    prefix = data.draw(st.binary(max_size=3))
    buf = prefix + batch[:cut]
    with pytest.raises(CorruptBatch):
        check_batch(buf, len(prefix), cut, MAX)


@settings(max_examples=150, deadline=None)
@given(recs=records(max_size=6), codec=codecs, data=st.data())
def test_any_bit_flip_in_the_covered_region_is_rejected(
    recs: list[Rec], codec: Compression, data: st.DataObject
) -> None:
    batch = bytearray(build_batch(recs, codec))
    i = data.draw(st.integers(CRC_OFFSET, len(batch) - 1))
    batch[i] ^= 1 << data.draw(st.integers(0, 7))
    with pytest.raises(CorruptBatch):
        check_batch(batch, 0, len(batch), MAX)


# Fields after the crc that nothing but the CRC checks: a flip must surface as a CRC mismatch.
CRC_ONLY = ["attributes", "producer_id", "producer_epoch", "base_sequence"]


@settings(max_examples=100, deadline=None)
@given(
    recs=records(max_size=6),
    codec=codecs,
    where=st.sampled_from(["crc", "payload", *CRC_ONLY]),
    data=st.data(),
)
def test_bit_flip_after_the_crc_field_is_a_crc_mismatch(
    recs: list[Rec], codec: Compression, where: str, data: st.DataObject
) -> None:
    batch = bytearray(build_batch(recs, codec))
    span = range(HEADER_SIZE, len(batch)) if where == "payload" else FIELD_RANGE[where]
    i = data.draw(st.sampled_from(span))
    batch[i] ^= 1 << data.draw(st.integers(0, 7))
    with pytest.raises(CorruptBatch, match="crc mismatch"):
        check_batch(batch, 0, len(batch), MAX)


@pytest.mark.parametrize("bit", range(8))
def test_flipped_magic_bit_is_rejected(bit: int) -> None:
    data = bytearray(SAMPLES[0])
    data[FIELD_RANGE["magic"].start] ^= 1 << bit
    with pytest.raises(CorruptBatch, match="magic"):
        check_batch(data, 0, len(data), MAX)
    recrc(data)  # the CRC does not cover magic, but magic is checked on its own
    with pytest.raises(CorruptBatch, match="magic"):
        check_batch(data, 0, len(data), MAX)


@pytest.mark.parametrize("bit", range(8))
def test_flips_in_leader_owned_fields_do_not_invalidate(bit: int) -> None:
    for i in sorted(UNCOVERED):
        data = bytearray(SAMPLES[0])
        data[i] ^= 1 << bit
        check_batch(data, 0, len(data), MAX)


@pytest.mark.parametrize(
    "length", [MIN_BATCH_SIZE - LENGTH_PREFIX_SIZE - 1, 0, 1, -1, -(2**31), 48]
)
def test_batch_length_too_small(length: int) -> None:
    data = bytearray(SAMPLES[0])
    set_field(data, "batch_length", length, fix_crc=False)
    with pytest.raises(CorruptBatch, match="too small"):
        check_batch(data, 0, len(data), MAX)


def test_batch_length_against_max_batch_bytes() -> None:
    data = bytes(SAMPLES[0])
    assert check_batch(data, 0, len(data), len(data)).size == len(data)  # limit is inclusive
    with pytest.raises(CorruptBatch, match="exceeds"):
        check_batch(data, 0, len(data), len(data) - 1)
    big = bytearray(data)
    set_field(big, "batch_length", 2**31 - 1, fix_crc=False)
    with pytest.raises(CorruptBatch, match="exceeds"):
        check_batch(big, 0, len(big), MAX)
    # Under the limit but longer than the buffer: truncated.
    longer = bytearray(data)
    set_field(longer, "batch_length", len(data), fix_crc=False)
    with pytest.raises(CorruptBatch, match="truncated"):
        check_batch(longer, 0, len(longer), MAX)
    # Shorter than the real batch: the CRC over the shorter range fails.
    shorter = bytearray(data)
    set_field(shorter, "batch_length", len(data) - LENGTH_PREFIX_SIZE - 1, fix_crc=False)
    with pytest.raises(CorruptBatch):
        check_batch(shorter, 0, len(shorter), MAX)


@pytest.mark.parametrize(
    ("count", "last_delta"),
    [(2, 0), (2, 2), (1, 1), (0, -1), (-1, -2), (0, 0), (3, 1), (2**31 - 1, 1)],
)
def test_record_count_and_last_offset_delta_must_agree(count: int, last_delta: int) -> None:
    data = bytearray(SAMPLES[0])  # 2 records
    set_field(data, "record_count", count)
    set_field(data, "last_offset_delta", last_delta)
    with pytest.raises(CorruptBatch, match="disagree"):
        check_batch(data, 0, len(data), MAX)


def test_max_timestamp_below_first_timestamp() -> None:
    data = bytearray(SAMPLES[0])
    set_field(data, "max_timestamp_ms", read_header(data).first_timestamp_ms - 1)
    with pytest.raises(CorruptBatch, match="max_timestamp"):
        check_batch(data, 0, len(data), MAX)


def test_short_headers() -> None:
    for n in range(HEADER_SIZE):
        with pytest.raises(CorruptBatch):
            read_header(SAMPLES[0][:n])
        with pytest.raises(CorruptBatch):
            check_batch(SAMPLES[0][:n], 0, n, MAX)
    with pytest.raises(CorruptBatch):
        read_header(SAMPLES[0], len(SAMPLES[0]) - HEADER_SIZE + 1)


@pytest.mark.parametrize("n", [0, 5, 11])
def test_peek_length_on_a_short_buffer_raises_a_wire_error(n: int) -> None:
    with pytest.raises(WireError):
        peek_length(SAMPLES[0][:n])


def test_peek_length_at_a_position() -> None:
    a, b = bytearray(SAMPLES[0]), bytearray(SAMPLES[1])
    assign_offset_and_epoch(b, 0, 12345, 1)
    assert peek_length(a + b, len(a)) == (12345, len(b))


def test_decode_records_rejects_unknown_codec_and_bad_payload() -> None:
    data = bytearray(SAMPLES[0])
    set_field(data, "attributes", 5)
    check_batch(data, 0, len(data), MAX)  # the broker never decompresses
    with pytest.raises(UnsupportedCompression):
        decode_records(data)
    # A CRC-valid batch from a buggy producer whose payload disagrees with record_count.
    bad = encode_batch_from_payload(
        encode_record(0, 0, None, b"x", None),
        record_count=2,
        first_timestamp_ms=0,
        max_timestamp_ms=0,
    )
    check_batch(bad, 0, len(bad), MAX)
    with pytest.raises(CorruptBatch):
        decode_records(bad)


def test_control_and_timestamp_bits_keep_the_codec() -> None:
    payload = encode_record(0, 0, b"k", b"v", None)
    attrs = ATTR_CONTROL | ATTR_TIMESTAMP_LOG_APPEND
    data = encode_batch_from_payload(
        payload, record_count=1, first_timestamp_ms=9, max_timestamp_ms=9, attributes=attrs
    )
    h = check_batch(data, 0, len(data), MAX)
    assert h.attributes == attrs and h.compression == Compression.NONE
    assert decode_records(data)[0].value == b"v"


# -- valid_prefix --------------------------------------------------------------------------------


def _joined(specs: list[tuple[list[Rec], Compression]]) -> tuple[bytearray, list[int]]:
    buf, ends = bytearray(), []
    for i, (recs, codec) in enumerate(specs):
        batch = bytearray(build_batch(recs, codec))
        assign_offset_and_epoch(batch, 0, i * 1000, i)
        buf += batch
        ends.append(len(buf))
    return buf, ends


batch_specs = st.lists(st.tuples(records(max_size=4), codecs), min_size=1, max_size=5)


@settings(max_examples=100, deadline=None)
@given(specs=batch_specs, data=st.data())
def test_valid_prefix_of_a_cut_buffer(
    specs: list[tuple[list[Rec], Compression]], data: st.DataObject
) -> None:
    buf, ends = _joined(specs)
    cut = data.draw(st.integers(0, len(buf)))
    tail = data.draw(st.sampled_from([b"", b"\x00" * 7, b"\xff" * 70]))
    damaged = buf[:cut] + tail
    length, views = valid_prefix(damaged, MAX)
    # A batch survives when its bytes are intact: the tail may happen to restore a few
    # (a gzip trailer ends with the length's high zero bytes, for one).
    whole = [e for e in ends if damaged[:e] == buf[:e]]
    expected = whole[-1] if whole else 0
    assert length == expected
    assert [v.position for v in views] == ([0, *whole[:-1]] if whole else [])
    assert [v.header.base_offset for v in views] == [i * 1000 for i in range(len(whole))]


@settings(max_examples=120, deadline=None)
@given(specs=batch_specs, data=st.data())
def test_valid_prefix_of_a_corrupted_buffer(
    specs: list[tuple[list[Rec], Compression]], data: st.DataObject
) -> None:
    buf, ends = _joined(specs)
    i = data.draw(st.integers(0, len(buf) - 1))
    buf[i] ^= 1 << data.draw(st.integers(0, 7))
    starts = [0, *ends[:-1]]
    damaged = max(k for k, s in enumerate(starts) if s <= i)
    length, views = valid_prefix(buf, MAX)
    if i - starts[damaged] in UNCOVERED:
        assert length == len(buf) and len(views) == len(ends)
    else:
        assert length == starts[damaged]
        assert [v.position for v in views] == starts[:damaged]


def test_valid_prefix_stops_at_a_batch_over_the_limit() -> None:
    small = build_batch([(1, None, b"a", None)])
    large = build_batch([(1, None, b"a" * 500, None)])
    length, views = valid_prefix(small + large + small, len(small) + 10)
    assert length == len(small) and len(views) == 1


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 400))
def test_batch_functions_raise_only_corrupt_batch_on_garbage(data: bytes, limit: int) -> None:
    length, views = valid_prefix(data, limit)
    assert 0 <= length <= len(data)
    assert length == sum(v.header.size for v in views)
    try:
        for view in iter_batches(data, limit, verify_crc=False):
            decode_records(data, view.position)
    except (CorruptBatch, UnsupportedCompression):
        pass


@settings(max_examples=50, deadline=None)
@given(INT64, st.integers(-(2**31), 2**31 - 1))
def test_assign_offset_and_epoch_full_range(base: int, epoch: int) -> None:
    data = bytearray(b"\xaa" * 3 + SAMPLES[1])
    assign_offset_and_epoch(data, 3, base, epoch)
    h = check_batch(data, 3, len(data) - 3, MAX)
    assert (h.base_offset, h.leader_epoch) == (base, epoch)
    assert data[:3] == b"\xaa" * 3
    assert [r.offset for r in decode_records(data, 3)] == [base, base + 1, base + 2]
    assert struct.unpack_from(">q", data, 3)[0] == base


@pytest.mark.parametrize("keyed", [False, True])
def test_builder_fast_paths_match_the_general_encoding_at_their_edges(keyed: bool) -> None:
    """The table-driven shapes cover offsets below 8192, timestamps 0..8191 ms after the
    first (one-byte deltas below 64) and sizes under 8160 bytes; records around each edge
    must be encoded exactly as encode_record does (which every other shape goes through)."""
    sizes = [0, 1, 63, 64, 100, 8127, 8128, 8159, 8160, 8161, 9000]
    deltas = [0, 1, 63, 64, -1, 1000, 8191, 8192, 65, 100_000, -64, 2]  # 12: every size meets each
    recs: list[Rec] = []
    for i in range(8300):
        value = b"v" * sizes[i % len(sizes)]
        key = b"k" * sizes[(i // 3) % len(sizes)] if keyed and i % 2 else None
        recs.append((10_000 + deltas[i % len(deltas)], key, value, None))
    recs[0] = (10_000, None, b"first", None)
    builder = BatchBuilder()
    added = [builder.append(*r) for r in recs]
    built = builder.build()
    parts = [encode_record(i, ts - 10_000, k, v, h) for i, (ts, k, v, h) in enumerate(recs)]
    assert added == [len(p) for p in parts]
    assert built[HEADER_SIZE:] == b"".join(parts)
    assert builder.size_bytes == len(built)
    _check_round_trip(recs, built, 0)


def test_three_byte_offset_deltas_are_built_from_pieces() -> None:
    from rillet.wire.batch import _offset_delta
    from rillet.wire.varint import zigzag_encode_bytes

    for i in [*range(8000, 8400), *range(8192, 1 << 20, 997), (1 << 20) - 1]:
        assert _offset_delta(i) == zigzag_encode_bytes(i)
