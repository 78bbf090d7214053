"""Frames (docs/wire-protocol.md): length prefix, CBOR header map, raw blobs; incremental
decoding."""

from __future__ import annotations

import struct
from typing import Any

import cbor2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wire_helpers import feed_in_chunks, header_frame, join_parts, one_frame, raw_frame

from rillet.wire.errors import FrameTooLarge, MalformedFrame, WireError
from rillet.wire.frame import (
    DEFAULT_MAX_FRAME_BYTES,
    LENGTH,
    MAX_BLOBS_PER_FRAME,
    FileRegion,
    Frame,
    FrameDecoder,
    blob_length,
    encode_frame,
    frame_bytes,
    parse_frame_body,
)

simple_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64 - 1),
    st.text(max_size=10),
    st.binary(max_size=10),
    st.lists(st.integers(), max_size=3),
)
headers = st.dictionaries(
    st.text(max_size=10).filter(lambda k: k != "blobs"), simple_values, max_size=5
)
blob_lists = st.lists(st.binary(max_size=200), max_size=4)
frames = st.lists(st.tuples(headers, blob_lists), min_size=1, max_size=6)


def test_encode_frame_layout() -> None:
    parts = encode_frame({"a": 1}, [b"xy", bytearray(b"z"), memoryview(b"0123")[1:]])
    encoded = cbor2.dumps({"a": 1, "blobs": [2, 1, 3]})
    assert parts[0] == LENGTH.pack(len(encoded) + 6) + encoded
    assert [bytes(p) for p in parts[1:]] == [b"xy", b"z", b"123"]
    # Without blobs the header has no "blobs" key.
    assert encode_frame({"a": 1}) == [
        LENGTH.pack(len(cbor2.dumps({"a": 1}))) + cbor2.dumps({"a": 1})
    ]
    assert frame_bytes({"a": 1}, [b"xy"]) == join_parts(encode_frame({"a": 1}, [b"xy"]))


def test_file_regions_are_counted_but_not_materialised() -> None:
    region = FileRegion(fd=99, position=10, length=7)
    parts = encode_frame({"c": 1}, [b"ab", region])
    assert parts[2] is region
    encoded = cbor2.dumps({"c": 1, "blobs": [2, 7]})
    assert parts[0] == LENGTH.pack(len(encoded) + 9) + encoded
    # frame_bytes leaves the region out (the driver sends it with sendfile).
    assert frame_bytes({"c": 1}, [b"ab", region]) == parts[0] + b"ab"  # type: ignore[list-item]


def test_blob_length() -> None:
    assert blob_length(b"abc") == 3
    assert blob_length(bytearray(5)) == 5
    assert blob_length(memoryview(bytes(12)).cast("I")) == 12  # bytes, not items
    assert blob_length(FileRegion(0, 100, 42)) == 42


@settings(max_examples=200, deadline=None)
@given(frames=frames, chunks=st.lists(st.integers(1, 97), min_size=1, max_size=20))
def test_round_trip_in_random_chunks(
    frames: list[tuple[dict[str, Any], list[bytes]]], chunks: list[int]
) -> None:
    stream = b"".join(frame_bytes(h, b) for h, b in frames)
    decoder = FrameDecoder(max_frame_bytes=1 << 16)
    got = feed_in_chunks(decoder, stream, chunks)
    assert decoder.buffered_bytes == 0 and decoder.next_frame() is None
    assert len(got) == len(frames)
    for frame, (header, blobs) in zip(got, frames, strict=True):
        expected = {**header, "blobs": [len(b) for b in blobs]} if blobs else header
        assert frame.header == expected
        assert [bytes(b) for b in frame.blobs] == blobs
        assert all(isinstance(b, memoryview) for b in frame.blobs)


def test_byte_at_a_time_and_buffer_types() -> None:
    first = frame_bytes({"correlation_id": 1}, [b"blob-1", b""])
    data = first + frame_bytes({"x": "y"})
    d = FrameDecoder()
    got: list[Frame] = []
    for i in range(len(data)):
        chunk = data[i : i + 1]
        d.feed(memoryview(chunk) if i % 2 else bytearray(chunk))
        if (f := d.next_frame()) is not None:
            got.append(f)
        consumed = len(first) if got else 0
        assert d.buffered_bytes == (0 if len(got) == 2 else i + 1 - consumed)
    assert [f.header.get("x") for f in got] == [None, "y"]
    assert [bytes(b) for b in got[0].blobs] == [b"blob-1", b""]


def test_next_frame_needs_the_whole_frame() -> None:
    data = frame_bytes({"k": 1}, [b"12345"])
    d = FrameDecoder()
    d.feed(data[:3])
    assert d.next_frame() is None
    d.feed(data[3:-1])
    assert d.next_frame() is None and d.next_frame() is None
    d.feed(data[-1:])
    frame = d.next_frame()
    assert frame is not None and bytes(frame.blobs[0]) == b"12345"


def test_blobs_survive_later_feeding() -> None:
    d = FrameDecoder()
    d.feed(frame_bytes({}, [b"first"]) + b"\x00\x00")
    frame = d.next_frame()
    assert frame is not None
    d.feed(b"\x00\x05" + b"xxxxx" * 50)  # more bytes after a frame was handed out
    assert bytes(frame.blobs[0]) == b"first"


def test_frame_too_large() -> None:
    limit = 1000
    d = FrameDecoder(max_frame_bytes=limit)
    d.feed(struct.pack(">I", limit + 1))  # the length alone is enough to refuse
    with pytest.raises(FrameTooLarge):
        d.next_frame()
    d = FrameDecoder(max_frame_bytes=limit)
    d.feed(b"\xff\xff\xff\xff")
    with pytest.raises(FrameTooLarge):
        d.next_frame()


def test_frame_exactly_at_the_limit_is_accepted() -> None:
    header = cbor2.dumps({"blobs": [900]})
    limit = len(header) + 900
    d = FrameDecoder(max_frame_bytes=limit)
    d.feed(raw_frame(header + b"\x01" * 900))
    frame = d.next_frame()
    assert frame is not None and len(frame.blobs[0]) == 900
    d.feed(raw_frame(header + b"\x01" * 901))
    with pytest.raises(FrameTooLarge):
        d.next_frame()


def test_default_limit() -> None:
    assert DEFAULT_MAX_FRAME_BYTES == 100 * 1024 * 1024
    d = FrameDecoder()
    d.feed(struct.pack(">I", DEFAULT_MAX_FRAME_BYTES + 1))
    with pytest.raises(FrameTooLarge):
        d.next_frame()


MALFORMED: list[Any] = [
    # (frame body, expected correlation_id)
    pytest.param(b"", None, id="empty-body"),
    pytest.param(b"\xff", None, id="lone-break"),
    pytest.param(b"\x1c", None, id="reserved-byte"),
    pytest.param(cbor2.dumps({"correlation_id": 5})[:-1], None, id="truncated-map"),
    pytest.param(b"\xa1" * 3000, None, id="deeply-nested"),
    pytest.param(cbor2.dumps([1, 2]), None, id="array-header"),
    pytest.param(cbor2.dumps(7), None, id="int-header"),
    pytest.param(cbor2.dumps("map"), None, id="text-header"),
    pytest.param(cbor2.dumps(None), None, id="null-header"),
    pytest.param(cbor2.dumps({"correlation_id": 3, "blobs": [100]}), 3, id="blob-past-end"),
    pytest.param(
        cbor2.dumps({"correlation_id": 3, "blobs": [2, 2]}) + b"abc", 3, id="second-blob-past-end"
    ),
    pytest.param(cbor2.dumps({"correlation_id": 4}) + b"extra", 4, id="trailing-no-blobs"),
    pytest.param(
        cbor2.dumps({"correlation_id": 4, "blobs": [1]}) + b"ab", 4, id="trailing-after-blobs"
    ),
    pytest.param(cbor2.dumps({"correlation_id": 6, "blobs": [-1]}), 6, id="negative-length"),
    pytest.param(cbor2.dumps({"correlation_id": 6, "blobs": [1.0]}) + b"a", 6, id="float-length"),
    pytest.param(cbor2.dumps({"correlation_id": 6, "blobs": ["1"]}) + b"a", 6, id="text-length"),
    pytest.param(cbor2.dumps({"correlation_id": 6, "blobs": [True]}) + b"a", 6, id="bool-length"),
    pytest.param(cbor2.dumps({"correlation_id": 6, "blobs": [None]}), 6, id="null-length"),
    pytest.param(cbor2.dumps({"correlation_id": 6, "blobs": [[1]]}) + b"a", 6, id="list-length"),
    pytest.param(cbor2.dumps({"correlation_id": 6, "blobs": [2**64]}), 6, id="huge-length"),
    pytest.param(cbor2.dumps({"correlation_id": 7, "blobs": 1}) + b"a", 7, id="blobs-not-a-list"),
    pytest.param(cbor2.dumps({"correlation_id": 7, "blobs": None}), 7, id="blobs-null"),
    pytest.param(cbor2.dumps({"correlation_id": 7, "blobs": {"a": 1}}) + b"a", 7, id="blobs-map"),
    pytest.param(
        cbor2.dumps({"correlation_id": 8, "blobs": [0] * (MAX_BLOBS_PER_FRAME + 1)}),
        8,
        id="too-many-blobs",
    ),
    pytest.param(cbor2.dumps({"correlation_id": "9", "blobs": [5]}), None, id="text-cid"),
    pytest.param(cbor2.dumps({"correlation_id": 1.5, "blobs": [5]}), None, id="float-cid"),
    pytest.param(cbor2.dumps({"blobs": [5]}), None, id="no-cid"),
    pytest.param(cbor2.dumps({"correlation_id": -3, "blobs": [5]}), -3, id="negative-cid"),
]


SKIPPABLE_BODIES = [p.values[0] for p in MALFORMED if p.id != "too-many-blobs"]


@pytest.mark.parametrize(("body", "cid"), MALFORMED)
def test_malformed_frames_are_reported_and_skipped(body: bytes, cid: int | None) -> None:
    d = FrameDecoder(max_frame_bytes=1 << 22)
    good = frame_bytes({"correlation_id": 77, "ok": True}, [b"after"])
    d.feed(raw_frame(body) + good)
    with pytest.raises(MalformedFrame) as info:
        d.next_frame()
    assert info.value.correlation_id == cid
    assert type(info.value.correlation_id) is type(cid)
    # The bad frame was consumed whole: the next one decodes normally.
    frame = d.next_frame()
    assert frame is not None and frame.header["correlation_id"] == 77
    assert bytes(frame.blobs[0]) == b"after"
    assert d.next_frame() is None and d.buffered_bytes == 0
    with pytest.raises(MalformedFrame):
        parse_frame_body(body)


def test_bool_correlation_id_is_not_carried() -> None:
    with pytest.raises(MalformedFrame) as info:
        parse_frame_body(cbor2.dumps({"correlation_id": True, "blobs": [5]}))
    assert info.value.correlation_id is None


def test_zero_length_blobs_and_empty_blob_list() -> None:
    frame = one_frame(header_frame({"blobs": [0, 0, 3]}, b"abc"))
    assert [bytes(b) for b in frame.blobs] == [b"", b"", b"abc"]
    frame = one_frame(header_frame({"blobs": []}))
    assert frame.blobs == [] and frame.header == {"blobs": []}


@settings(max_examples=120, deadline=None)
@given(
    items=st.lists(
        st.one_of(
            st.tuples(st.just("good"), headers, blob_lists),
            st.tuples(st.just("bad"), st.sampled_from(SKIPPABLE_BODIES), st.just([])),
        ),
        min_size=1,
        max_size=8,
    ),
    chunks=st.lists(st.integers(1, 300), min_size=1, max_size=10),
)
def test_decoder_recovers_after_malformed_frames(
    items: list[tuple[str, Any, list[bytes]]], chunks: list[int]
) -> None:
    stream = b"".join(frame_bytes(h, b) if kind == "good" else raw_frame(h) for kind, h, b in items)
    d = FrameDecoder(max_frame_bytes=1 << 16)
    outcomes: list[Any] = []
    pos = k = 0
    while pos < len(stream):
        step = chunks[k % len(chunks)]
        d.feed(stream[pos : pos + step])
        pos, k = pos + step, k + 1
        while True:
            try:
                f = d.next_frame()
            except MalformedFrame:
                outcomes.append("bad")
                continue
            if f is None:
                break
            outcomes.append([bytes(b) for b in f.blobs])
    assert outcomes == [b if kind == "good" else "bad" for kind, _, b in items]
    assert d.buffered_bytes == 0


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400), st.lists(st.integers(1, 50), min_size=1, max_size=5))
def test_random_streams_raise_only_frame_errors(data: bytes, chunks: list[int]) -> None:
    d = FrameDecoder(max_frame_bytes=1 << 12)
    pos = k = 0
    try:
        while pos < len(data):
            d.feed(data[pos : pos + chunks[k % len(chunks)]])
            pos += chunks[k % len(chunks)]
            k += 1
            while True:
                try:
                    if d.next_frame() is None:
                        break
                except MalformedFrame:
                    continue
    except FrameTooLarge:
        pass
    except WireError as exc:  # pragma: no cover
        raise AssertionError(type(exc).__name__) from exc
