"""record_codec and varint: Kafka's v2 record layout, byte for byte, and a decoder that accepts
exactly ``count`` well-formed records and raises only CorruptBatch on anything else."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from wire_helpers import maybe_bytes, maybe_headers

from rillet.wire.errors import CorruptBatch
from rillet.wire.record_codec import (
    RecordColumns,
    _decode_general,
    decode_records,
    encode_headers,
    encode_record,
)
from rillet.wire.uniform_records import _layout, decode_uniform, first_record_shape
from rillet.wire.varint import (
    DECODED,
    ENCODED,
    TABLE_SIZE,
    encode_varint,
    read_varint,
    read_varlong,
    zigzag_encode_bytes,
)

INT64 = st.integers(-(2**63), 2**63 - 1)
VARINT_EDGES = [0, -1, 1, 63, -64, 64, -65, 8191, -8192, 8192, 2**31 - 1, -(2**31)]
VARLONG_EDGES = [*VARINT_EDGES, 2**31, -(2**31) - 1, 2**63 - 1, -(2**63)]


def reference_zigzag(value: int) -> bytes:
    """Kafka's ByteUtils.writeVarlong, written out plainly."""
    raw = (value << 1) ^ (value >> 63)
    raw &= (1 << 64) - 1
    out = b""
    while raw & ~0x7F:
        out += bytes([(raw & 0x7F) | 0x80])
        raw >>= 7
    return out + bytes([raw])


@settings(max_examples=300, deadline=None)
@given(st.one_of(INT64, st.sampled_from(VARLONG_EDGES)))
def test_zigzag_matches_kafkas_and_reads_back(value: int) -> None:
    encoded = zigzag_encode_bytes(value)
    assert encoded == reference_zigzag(value) == encode_varint(value)
    assert read_varlong(encoded + b"tail", 0) == (value, len(encoded))
    if -(2**31) <= value < 2**31:
        assert len(encoded) <= 5 and read_varint(encoded, 0) == (value, len(encoded))
    else:
        with pytest.raises(CorruptBatch):
            read_varint(encoded, 0)


def test_tables_agree_with_the_general_form() -> None:
    assert len(ENCODED) == TABLE_SIZE
    assert all(ENCODED[v] == reference_zigzag(v) for v in range(TABLE_SIZE))
    assert all(len(e) <= 2 for e in ENCODED)
    for raw in range(1 << 14):
        encoded = bytes([raw]) if raw < 0x80 else bytes([(raw & 0x7F) | 0x80, raw >> 7])
        assert read_varlong(encoded, 0)[0] == DECODED[raw]


@pytest.mark.parametrize(
    ("data", "reader"),
    [
        (b"", read_varint),
        (b"\x80", read_varint),
        (b"\xff\xff", read_varint),
        (b"\x80" * 5 + b"\x00", read_varint),  # six bytes
        (b"\x80" * 10 + b"\x00", read_varlong),  # eleven bytes
        (b"\xff\xff\xff\xff\x7f", read_varint),  # 35 bits: beyond int32
        (b"\xff" * 9 + b"\x7f", read_varlong),  # beyond int64
    ],
)
def test_bad_varints_are_corrupt(data: bytes, reader: object) -> None:
    with pytest.raises(CorruptBatch):
        reader(data, 0)  # type: ignore[operator]


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1])
def test_encoding_beyond_int64_is_a_value_error(value: int) -> None:
    with pytest.raises(ValueError):
        zigzag_encode_bytes(value)


def kafka_record(
    offset_delta: int,
    ts_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes | None]] | None,
) -> bytes:
    """A record laid out field by field as Kafka's DefaultRecord.writeTo does."""

    def blob(b: bytes | None) -> bytes:
        return reference_zigzag(-1) if b is None else reference_zigzag(len(b)) + b

    body = b"\x00" + reference_zigzag(ts_delta) + reference_zigzag(offset_delta)
    body += blob(key) + blob(value) + reference_zigzag(len(headers or []))
    for k, v in headers or []:
        body += blob(k.encode()) + blob(v)
    return reference_zigzag(len(body)) + body


ts_deltas = st.one_of(st.integers(-(2**40), 2**40), st.sampled_from(VARLONG_EDGES))


@settings(max_examples=400, deadline=None)
@given(
    offset_delta=st.one_of(st.integers(0, 2**31 - 1), st.sampled_from([0, 63, 64, 8191, 8192])),
    ts_delta=ts_deltas,
    key=maybe_bytes,
    value=maybe_bytes,
    headers=maybe_headers,
)
@example(offset_delta=0, ts_delta=0, key=None, value=None, headers=None)
@example(offset_delta=0, ts_delta=-(2**63), key=b"", value=b"", headers=[("é", None)])
def test_encode_record_is_kafkas_layout(
    offset_delta: int,
    ts_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes | None]] | None,
) -> None:
    assert encode_record(offset_delta, ts_delta, key, value, headers) == kafka_record(
        offset_delta, ts_delta, key, value, headers
    )


Rec = tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]] | None]
recs = st.lists(st.tuples(ts_deltas, maybe_bytes, maybe_bytes, maybe_headers), max_size=20)


def encode_all(records: list[Rec]) -> bytes:
    return b"".join(encode_record(i, *r) for i, r in enumerate(records))


@settings(max_examples=300, deadline=None)
@given(records=recs)
def test_decode_round_trips_any_records(records: list[Rec]) -> None:
    payload = encode_all(records)
    got = decode_records(payload, len(records))
    assert got.timestamp_deltas_ms == [r[0] for r in records]
    assert got.keys == [r[1] for r in records]
    assert got.values == [r[2] for r in records]
    expected_headers = [list(r[3]) if r[3] else None for r in records]
    assert got.headers == (expected_headers if any(expected_headers) else None)
    assert decode_records(memoryview(payload), len(records)) == got
    assert decode_records(bytearray(payload), len(records)) == got


def test_many_records_cross_the_two_byte_offset_deltas() -> None:
    records: list[Rec] = [(i % 100 - 50, None, b"v" * (i % 300), None) for i in range(9000)]
    got = decode_records(encode_all(records), len(records))
    assert got.values == [r[2] for r in records]
    assert got.timestamp_deltas_ms == [r[0] for r in records]


def test_zero_records() -> None:
    assert decode_records(b"", 0) == RecordColumns([], [], [], None)


GOOD = encode_record(0, 5, b"k", b"value", [("h", b"x")])


@pytest.mark.parametrize(
    ("payload", "count"),
    [
        pytest.param(GOOD, 2, id="too-few-records"),
        pytest.param(GOOD + GOOD, 1, id="trailing-record"),
        pytest.param(GOOD + b"\x00", 1, id="trailing-byte"),
        pytest.param(GOOD[:-1], 1, id="truncated"),
        pytest.param(b"", 1, id="empty"),
        pytest.param(GOOD, -1, id="negative-count"),
        pytest.param(b"\x02\x00\x00\x00\x01\x01\x00", 1, id="length-too-small"),
        pytest.param(encode_record(1, 0, None, b"v", None), 1, id="offset-delta-not-index"),
        pytest.param(kafka_record(0, 0, None, b"v", None)[:-1] + b"\x02", 1, id="header-count"),
    ],
)
def test_malformed_record_sets_are_corrupt(payload: bytes, count: int) -> None:
    with pytest.raises(CorruptBatch):
        decode_records(payload, count)


def _body(*parts: bytes) -> bytes:
    body = b"".join(parts)
    return zigzag_encode_bytes(len(body)) + body


@pytest.mark.parametrize(
    "record",
    [
        pytest.param(_body(b"\x00\x00\x00\x03\x01\x00"), id="key-length-minus-two"),
        pytest.param(_body(b"\x00\x00\x00\x01\x03\x00"), id="value-length-minus-two"),
        pytest.param(_body(b"\x00\x00\x00\x01\x08ab\x00"), id="value-past-record"),
        pytest.param(_body(b"\x00\x00\x00\x01\x01\x02\x01\x00"), id="null-header-key"),
        pytest.param(_body(b"\x00\x00\x00\x01\x01\x02\x02\xff\x00"), id="header-key-not-utf8"),
        pytest.param(_body(b"\x00\x00\x00\x01\x01\x01"), id="negative-header-count"),
        pytest.param(_body(b"\x00\x00\x00\x01\x01\xfe\xff\x03"), id="huge-header-count"),
        pytest.param(_body(b"\x00\x00\x00\x01\x01\x00\x00"), id="byte-after-headers"),
        pytest.param(_body(b"\x00" + b"\x80" * 10 + b"\x00\x00\x01\x01\x00"), id="long-ts"),
        pytest.param(_body(b"\x00\x00" + b"\x80" * 5 + b"\x00\x01\x01\x00"), id="long-offset"),
        pytest.param(_body(b"\x00\x00\x00\x01\x01\x02\x03\x80"), id="header-value-minus-two"),
    ],
)
def test_malformed_fields_are_corrupt(record: bytes) -> None:
    with pytest.raises(CorruptBatch):
        decode_records(record, 1)


def test_null_header_values_and_empty_header_keys_are_kept() -> None:
    record = encode_record(0, 0, None, None, [("", None), ("k", b""), ("ключ", b"v")])
    got = decode_records(record, 1)
    assert got.headers == [[("", None), ("k", b""), ("ключ", b"v")]]
    assert encode_headers([("a", None)]) == b"\x02\x02a\x01"


@pytest.mark.parametrize(
    "headers", [[(b"k", b"v")], [("k", "v")], [(1, b"v")]], ids=["bytes-key", "str-value", "int"]
)
def test_encoding_bad_header_types_is_a_type_error(headers: list[tuple[object, object]]) -> None:
    with pytest.raises(TypeError):
        encode_record(0, 0, None, b"v", headers)  # type: ignore[arg-type]


@settings(max_examples=1000, deadline=None)
@given(data=st.binary(max_size=120), count=st.integers(-2, 12))
def test_random_bytes_raise_only_corrupt_batch(data: bytes, count: int) -> None:
    try:
        decode_records(data, count)
    except CorruptBatch:
        pass


@settings(max_examples=1000, deadline=None)
@given(records=recs.filter(bool), data=st.data())
def test_mutated_records_raise_only_corrupt_batch(records: list[Rec], data: st.DataObject) -> None:
    payload = bytearray(encode_all(records))
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["set", "insert", "delete"]))
        i = data.draw(st.integers(0, len(payload) - 1))
        if op == "set":
            payload[i] = data.draw(st.integers(0, 255))
        elif op == "insert":
            payload[i:i] = data.draw(st.binary(min_size=1, max_size=3))
        elif len(payload) > 1:
            del payload[i]
    count = len(records) + data.draw(st.integers(-1, 1))
    try:
        decode_records(bytes(payload), count)
    except CorruptBatch:
        pass


# -- the uniform-layout decoder (wire.uniform_records) -------------------------------------


def uniform_payload(count: int, key: bytes | None, value: bytes, spread_ms: int) -> bytes:
    return b"".join(
        encode_record(i, (i * 7) % (spread_ms + 1) - (spread_ms // 2 if i else 0), key, value, None)
        for i in range(count)
    )


uniform_cases = st.tuples(
    st.sampled_from([1, 3, 4, 63, 64, 65, 200, 8192]),
    st.one_of(st.none(), st.binary(max_size=70)),
    st.one_of(st.binary(max_size=70), st.sampled_from([b"v" * 8191, b"w" * 300])),
    st.sampled_from([0, 5, 126, 128, 5000]),
)


@settings(max_examples=200, deadline=None)
@given(case=uniform_cases)
def test_uniform_batches_decode_like_the_general_decoder(
    case: tuple[int, bytes | None, bytes, int],
) -> None:
    count, key, value, spread = case
    payload = uniform_payload(count, key, value, spread)
    general = _decode_general(payload, count)
    assert decode_records(payload, count) == general
    shape = first_record_shape(payload)
    assert shape == (-1 if key is None else len(key), len(value))
    fast = decode_uniform(payload, count, *shape)
    if spread <= 126:  # timestamp deltas within -63..63 (one byte): the fast path applies
        assert fast is not None
    if fast is not None:
        assert RecordColumns(*fast, None) == general


@settings(max_examples=1500, deadline=None)
@given(case=uniform_cases, data=st.data())
def test_uniform_decoder_never_accepts_what_the_general_decoder_refuses(
    case: tuple[int, bytes | None, bytes, int], data: st.DataObject
) -> None:
    """Mutated uniform batches: the fast path returns None or exactly what the general
    decoder returns; it never accepts records the general decoder calls corrupt."""
    count, key, value, spread = case
    payload = bytearray(uniform_payload(min(count, 200), key, value, spread))
    count = min(count, 200)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(payload) - 1))
        op = data.draw(st.sampled_from(["set", "set", "insert", "delete"]))
        if op == "set":
            payload[i] = data.draw(st.integers(0, 255))
        elif op == "insert":
            payload[i:i] = data.draw(st.binary(min_size=1, max_size=2))
        else:
            del payload[i]
    raw = bytes(payload)
    count += data.draw(st.sampled_from([0, 0, 0, -1, 1]))
    shape = first_record_shape(raw)
    fast = decode_uniform(raw, count, *shape) if shape is not None else None
    try:
        general = _decode_general(raw, count)
    except CorruptBatch:
        assert fast is None
        with pytest.raises(CorruptBatch):
            decode_records(raw, count)
        return
    if fast is not None:
        assert RecordColumns(*fast, None) == general
    assert decode_records(raw, count) == general


def test_uniform_decoder_turns_away_other_shapes() -> None:
    mixed = uniform_payload(10, None, b"a" * 10, 0) + encode_record(10, 0, None, b"b" * 11, None)
    assert decode_uniform(mixed, 11, -1, 10) is None
    with_headers = b"".join(encode_record(i, 0, None, b"v", [("h", b"")]) for i in range(5))
    assert decode_uniform(with_headers, 5, -1, 1) is None
    assert decode_records(with_headers, 5).headers == [[("h", b"")]] * 5
    shifted = b"".join(encode_record(i + 1, 0, None, b"v", None) for i in range(5))
    assert decode_uniform(shifted, 5, -1, 1) is None
    assert decode_uniform(uniform_payload(5, None, b"v", 0), 0, -1, 1) is None
    assert decode_uniform(uniform_payload(5, None, b"v", 0), 5, -1, -1) is None


def test_a_batch_of_another_shape_compiles_no_pattern() -> None:
    """Turned away by arithmetic on its length: batches whose first records vary in size
    must not fill the pattern cache with compilations they never use."""
    _layout.cache_clear()
    for n in range(20):
        last = encode_record(10, 0, None, b"b" * 100, None)
        mixed = uniform_payload(10, None, b"a" * n, 0) + last
        assert decode_records(mixed, 11).values[-1] == b"b" * 100
    assert _layout.cache_info().currsize == 0
    decode_records(uniform_payload(10, None, b"a", 0), 10)
    assert _layout.cache_info().currsize == 1
