"""record_codec: the hand-written CBOR encoder must equal cbor2 byte for byte; the decoder
must accept exactly ``[[int, bytes|null, bytes|null, [[text, bytes], ...]|null], ...]``."""

from __future__ import annotations

from typing import Any

import cbor2
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from wire_helpers import BOUNDARY_SIZES, maybe_bytes, maybe_headers

from rillet.wire.errors import CorruptBatch, WireError
from rillet.wire.record_codec import (
    array_head,
    decode_payload,
    encode_bytes,
    encode_headers,
    encode_int,
    encode_record,
)

INT_EDGES = [
    0,
    1,
    23,
    24,
    255,
    256,
    65535,
    65536,
    2**32 - 1,
    2**32,
    2**63 - 1,
    2**63,
    2**64 - 1,
    -1,
    -24,
    -25,
    -256,
    -257,
    -65536,
    -65537,
    -(2**32),
    -(2**32) - 1,
    -(2**63),
    -(2**64),
]
deltas = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63),
    st.sampled_from(INT_EDGES),
)


@settings(max_examples=500, deadline=None)
@given(delta=deltas, key=maybe_bytes, value=maybe_bytes, headers=maybe_headers)
@example(delta=0, key=None, value=None, headers=None)
@example(delta=-(2**63), key=b"", value=b"", headers=[])
@example(delta=2**63, key=b"k" * 65536, value=b"v" * 65535, headers=[("é", b"")])
def test_encode_record_equals_cbor2_and_round_trips(
    delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes]] | None,
) -> None:
    encoded = encode_record(delta, key, value, headers)
    # Documented behaviour: an empty header list is written as null, like None.
    as_lists = [list(h) for h in headers] if headers else None
    assert encoded == cbor2.dumps([delta, key, value, as_lists])

    (decoded,) = decode_payload(array_head(1) + encoded, 1)
    assert decoded[0] == delta and type(decoded[0]) is int
    assert decoded[1] == key and decoded[2] == value
    assert decoded[3] == ([tuple(h) for h in headers] if headers else None)


def test_empty_headers_encode_as_null() -> None:
    with_empty = encode_record(5, b"k", b"v", [])
    assert with_empty == encode_record(5, b"k", b"v", None)
    assert with_empty.endswith(b"\xf6")
    assert decode_payload(b"\x81" + with_empty, 1)[0][3] is None


@pytest.mark.parametrize("n", INT_EDGES)
def test_encode_int_edges(n: int) -> None:
    assert encode_int(n) == cbor2.dumps(n)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(2**64), max_value=2**64 - 1))
def test_encode_int_matches_cbor2(n: int) -> None:
    assert encode_int(n) == cbor2.dumps(n)


@pytest.mark.parametrize("n", [*BOUNDARY_SIZES, 22, 257, 65537])
def test_encode_bytes_length_boundaries(n: int) -> None:
    b = bytes(range(256)) * (n // 256) + bytes(range(n % 256))
    assert len(b) == n
    assert encode_bytes(b) == cbor2.dumps(b)


@pytest.mark.parametrize("n", [0, 1, 23, 24, 255, 256, 65535, 65536])
def test_array_head_boundaries(n: int) -> None:
    assert array_head(n) + b"\x00" * n == cbor2.dumps([0] * n)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=30), st.binary(max_size=300)), max_size=30))
def test_encode_headers_matches_cbor2(headers: list[tuple[str, bytes]]) -> None:
    assert encode_headers(headers) == cbor2.dumps([list(h) for h in headers])


@pytest.mark.parametrize("n", [0, 23, 24, 255, 256, 65535, 65536])
def test_header_key_text_length_boundaries(n: int) -> None:
    key = "x" * n
    assert encode_headers([(key, b"v")]) == cbor2.dumps([[key, b"v"]])
    multi = "ü" * (n // 2)  # two UTF-8 bytes each: the head counts bytes, not characters
    assert encode_headers([(multi, b"")]) == cbor2.dumps([[multi, b""]])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-(2**40), 2**40), maybe_bytes, maybe_bytes, maybe_headers),
        max_size=30,
    )
)
def test_decode_payload_round_trips_many_records(
    recs: list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes]] | None]],
) -> None:
    payload = array_head(len(recs)) + b"".join(encode_record(*r) for r in recs)
    assert payload == cbor2.dumps(
        [[d, k, v, [list(h) for h in hs] if hs else None] for d, k, v, hs in recs]
    )
    decoded = decode_payload(memoryview(payload), len(recs))
    assert decoded == [[d, k, v, [tuple(h) for h in hs] if hs else None] for d, k, v, hs in recs]


GOOD = [0, None, b"v", None]


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(cbor2.dumps({"a": 1}), id="map"),
        pytest.param(cbor2.dumps(1), id="int"),
        pytest.param(cbor2.dumps("text"), id="text"),
        pytest.param(cbor2.dumps(b"bytes"), id="bytes"),
        pytest.param(cbor2.dumps(None), id="null"),
        pytest.param(cbor2.dumps(cbor2.CBORTag(9999, [GOOD])), id="tagged-array"),
    ],
)
def test_decode_payload_rejects_non_arrays(payload: bytes) -> None:
    with pytest.raises(CorruptBatch):
        decode_payload(payload, 1)


@pytest.mark.parametrize(("actual", "expected"), [(0, 1), (1, 0), (1, 2), (3, 2), (2, 3)])
def test_decode_payload_rejects_wrong_counts(actual: int, expected: int) -> None:
    with pytest.raises(CorruptBatch):
        decode_payload(cbor2.dumps([GOOD] * actual), expected)


def test_decode_payload_accepts_empty_array_for_zero_records() -> None:
    assert decode_payload(b"\x80", 0) == []


BAD_RECORDS: list[Any] = [
    pytest.param(5, id="record-is-int"),
    pytest.param({"delta": 0}, id="record-is-map"),
    pytest.param(b"rec", id="record-is-bytes"),
    pytest.param(None, id="record-is-null"),
    pytest.param([], id="empty-record"),
    pytest.param([0, None, b"v"], id="three-items"),
    pytest.param([0, None, b"v", None, None], id="five-items"),
    pytest.param([1.5, None, b"v", None], id="float-delta"),
    pytest.param(["0", None, b"v", None], id="text-delta"),
    pytest.param([True, None, b"v", None], id="bool-delta"),
    pytest.param([None, None, b"v", None], id="null-delta"),
    pytest.param([0, "key", b"v", None], id="text-key"),
    pytest.param([0, 7, b"v", None], id="int-key"),
    pytest.param([0, [1], b"v", None], id="list-key"),
    pytest.param([0, None, "value", None], id="text-value"),
    pytest.param([0, None, False, None], id="bool-value"),
    pytest.param([0, None, {"a": b""}, None], id="map-value"),
    pytest.param([0, None, b"v", {"k": b"v"}], id="map-headers"),
    pytest.param([0, None, b"v", "k"], id="text-headers"),
    pytest.param([0, None, b"v", [["k"]]], id="header-pair-too-short"),
    pytest.param([0, None, b"v", [["k", b"v", b"w"]]], id="header-pair-too-long"),
    pytest.param([0, None, b"v", [[b"k", b"v"]]], id="bytes-header-key"),
    pytest.param([0, None, b"v", [["k", "v"]]], id="text-header-value"),
    pytest.param([0, None, b"v", [["k", None]]], id="null-header-value"),
    pytest.param([0, None, b"v", ["k", b"v"]], id="flat-header-list"),
    pytest.param([0, None, b"v", [["k", b"v"], 3]], id="second-header-not-pair"),
]


@pytest.mark.parametrize("bad", BAD_RECORDS)
def test_decode_payload_rejects_wrong_record_shapes(bad: Any) -> None:
    # The bad record comes second so the per-record loop must reach it.
    with pytest.raises(CorruptBatch):
        decode_payload(cbor2.dumps([GOOD, bad]), 2)


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"\xff", id="lone-break"),
        pytest.param(b"\x82\x84\x00\xf6\xf6", id="truncated"),
        pytest.param(b"\x9b\xff\xff\xff\xff\xff\xff\xff\xff", id="absurd-array-length"),
        pytest.param(b"\x81" * 5000, id="deep-nesting"),
        pytest.param(b"\x1c", id="reserved-additional-info"),
    ],
)
def test_decode_payload_rejects_invalid_cbor(payload: bytes) -> None:
    with pytest.raises(CorruptBatch):
        decode_payload(payload, 1)


def test_decode_payload_rejects_trailing_bytes() -> None:
    payload = array_head(1) + encode_record(0, None, b"v", None) + b"trailing garbage"
    with pytest.raises(CorruptBatch):
        decode_payload(payload, 1)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=200), st.integers(0, 5))
def test_decode_payload_raises_only_corrupt_batch_on_garbage(data: bytes, count: int) -> None:
    try:
        decode_payload(data, count)
    except CorruptBatch:
        pass
    except WireError as exc:  # pragma: no cover - reported by the assertion
        raise AssertionError(f"unexpected WireError subtype {type(exc).__name__}") from exc
