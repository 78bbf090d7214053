"""Fuzzing: whatever bytes arrive, the wire layer raises only WireError subclasses.

A server turns WireError into a typed protocol error; anything else (IndexError, KeyError,
struct.error, RecursionError, MemoryError, ValueError ...) would kill a connection task.
"""

from __future__ import annotations

import copy
import struct
from typing import Any

import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wire_helpers import cbor_values, header_frame, join_parts, raw_frame, strategy_for

from rillet.client.errors import CorruptMessageError
from rillet.client.fetch_decoder import decode_record_set
from rillet.wire import messages as m
from rillet.wire.batch import (
    CRC_OFFSET,
    CRC_START,
    HEADER_SIZE,
    LENGTH_PREFIX_SIZE,
    build_batch,
    check_batch,
    decode_records,
    iter_batches,
    valid_prefix,
)
from rillet.wire.compression import Compression
from rillet.wire.errors import FrameTooLarge, MalformedFrame, WireError
from rillet.wire.frame import Frame, FrameDecoder
from rillet.wire.protocol import decode_request, decode_response, encode_request, encode_response
from rillet.wire.schema import to_wire

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CHEAP_FUZZ = settings(FUZZ, max_examples=500)

BATCH = build_batch([(1, b"k", b"v", [("h", b"x")]), (2, None, b"w" * 40, None)])
ZBATCH = build_batch([(1, None, b"z" * 200, None)] * 3, Compression.GZIP)
REQUESTS: list[Any] = [
    m.ProduceRequest(
        -1, 1000, [m.ProducePartitionData("t", 0, BATCH), m.ProducePartitionData("u", 3, ZBATCH)]
    ),
    m.FetchRequest(500, 1, 1 << 20, [m.FetchPartition("t", 0, 5, 1024, 2, 1)]),
    m.ListOffsetsRequest([m.ListOffsetsPartition("t", 0, -2)]),
    m.MetadataRequest(None),
    m.MetadataRequest(["a", "b"]),
    m.CreateTopicsRequest([m.NewTopic("t", 3, 1, {"retention.ms": "5"})], 100, True),
    m.DeleteTopicsRequest(["t"]),
    m.ApiVersionsRequest(),
]
VALID_FRAMES = [join_parts(encode_request(i, r, "client")) for i, r in enumerate(REQUESTS)]
RESPONSE_TYPES = [t for _, t in m.REQUEST_TYPES.values()]


def drain(decoder: FrameDecoder, on_frame: Any = None) -> list[Frame]:
    """Take every complete frame, skipping malformed ones as a server would."""
    frames: list[Frame] = []
    while True:
        try:
            frame = decoder.next_frame()
        except MalformedFrame:
            continue
        if frame is None:
            return frames
        frames.append(frame)
        if on_frame is not None:
            try:
                on_frame(frame)
            except WireError:
                pass


def serve(data: bytes, chunk: int = 0, max_frame_bytes: int = 1 << 16) -> list[Frame]:
    """What a connection's read loop does; only WireError may come out of the wire layer."""
    d = FrameDecoder(max_frame_bytes)
    frames: list[Frame] = []
    try:
        if chunk <= 0:
            d.feed(data)
            frames += drain(d, decode_request)
        else:
            for i in range(0, len(data), chunk):
                d.feed(data[i : i + chunk])
                frames += drain(d, decode_request)
    except FrameTooLarge:
        pass  # fatal for the connection, but typed
    return frames


def mutate(data: bytes, ops: list[tuple[int, float, int, bytes]], fix_length: bool) -> bytes:
    buf = bytearray(data)
    for kind, where, n, extra in ops:
        if not buf:
            buf += extra
            continue
        i = int(where * len(buf))
        if kind == 0:  # bit flip
            buf[i] ^= 1 << (n % 8)
        elif kind == 1:  # truncate
            del buf[i:]
        elif kind == 2:  # insert random bytes
            buf[i:i] = extra
        elif kind == 3:  # delete a run
            del buf[i : i + n]
        elif kind == 4:  # splice in a run of a valid frame
            src = VALID_FRAMES[n % len(VALID_FRAMES)]
            j = int(where * len(src))
            buf[i : i + len(extra)] = src[j : j + len(extra) + 1]
        elif kind == 5:  # duplicate a run
            buf[i:i] = buf[i : i + n]
        else:  # overwrite with an interesting byte
            buf[i] = extra[0] if extra else 0xFF
    if fix_length and len(buf) >= 4:
        struct.pack_into(">I", buf, 0, len(buf) - 4)
    return bytes(buf)


ops = st.lists(
    st.tuples(
        st.integers(0, 6),
        st.floats(0, 1, exclude_max=True),
        st.integers(0, 40),
        st.binary(min_size=1, max_size=16),
    ),
    min_size=1,
    max_size=6,
)


@FUZZ
@given(
    which=st.integers(0, len(VALID_FRAMES) - 1),
    ops=ops,
    fix_length=st.booleans(),
    chunk=st.integers(0, 40),
)
def test_mutated_request_frames(which: int, ops: list[Any], fix_length: bool, chunk: int) -> None:
    data = mutate(VALID_FRAMES[which], ops, fix_length)
    serve(data + VALID_FRAMES[3], chunk)


@CHEAP_FUZZ
@given(data=st.binary(max_size=600), chunk=st.integers(0, 64))
def test_random_bytes(data: bytes, chunk: int) -> None:
    serve(data, chunk)


@CHEAP_FUZZ
@given(body=st.binary(max_size=300))
def test_random_frame_bodies_keep_the_stream_in_sync(body: bytes) -> None:
    # A bounded frame with any content never desynchronises the decoder.
    frames = serve(raw_frame(body) + VALID_FRAMES[1])
    assert frames and frames[-1].header["correlation_id"] == 1


@FUZZ
@given(header=cbor_values, tail=st.binary(max_size=20))
def test_arbitrary_cbor_headers(header: Any, tail: bytes) -> None:
    serve(header_frame(header, tail))


request_headers = st.fixed_dictionaries(
    {},
    optional={
        "api": st.one_of(st.sampled_from([0, 1, 2, 3, 8, 18, 19, 20, 1000]), cbor_values),
        "version": st.one_of(st.just(0), cbor_values),
        "correlation_id": st.one_of(st.integers(-5, 5), cbor_values),
        "client_id": st.one_of(st.none(), cbor_values),
        "body": cbor_values,
        "blobs": st.one_of(st.lists(st.integers(-2, 8), max_size=4), cbor_values),
    },
)


@FUZZ
@given(header=request_headers, tail=st.binary(max_size=30))
def test_arbitrary_request_headers(header: dict[str, Any], tail: bytes) -> None:
    serve(header_frame(header, tail))


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


@FUZZ
@given(request=st.one_of([strategy_for(type(r)) for r in REQUESTS]), data=st.data())
def test_valid_bodies_with_one_node_replaced(request: Any, data: st.DataObject) -> None:
    blobs: list[Any] = []
    body = to_wire(request, blobs)
    header: dict[str, Any] = {
        "api": int(m.API_OF_REQUEST[type(request)]),
        "version": 0,
        "correlation_id": 5,
        "body": copy.deepcopy(body),
    }
    path = data.draw(st.sampled_from(_paths(header["body"])))
    replacement = data.draw(cbor_values)
    if path:
        node = header["body"]
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = replacement
    else:
        header["body"] = replacement
    if blobs:
        header["blobs"] = [len(b) for b in blobs]
    frames = serve(header_frame(header, b"".join(blobs)))
    assert len(frames) == 1


@FUZZ
@given(
    response=st.one_of([strategy_for(t) for t in RESPONSE_TYPES]),
    ops=ops,
    fix_length=st.booleans(),
    as_type=st.sampled_from(RESPONSE_TYPES),
)
def test_mutated_response_frames(
    response: Any, ops: list[Any], fix_length: bool, as_type: type
) -> None:
    data = mutate(join_parts(encode_response(9, response)), ops, fix_length)
    d = FrameDecoder(1 << 16)
    d.feed(data)
    try:
        drain(d, lambda f: decode_response(f, as_type))
    except FrameTooLarge:
        pass


@FUZZ
@given(
    which=st.sampled_from([BATCH, ZBATCH, BATCH + ZBATCH]),
    ops=ops,
    verify_crc=st.booleans(),
)
def test_mutated_record_sets(which: bytes, ops: list[Any], verify_crc: bool) -> None:
    data = mutate(which, ops, fix_length=False)
    length, views = valid_prefix(data, 1 << 16)
    assert 0 <= length <= len(data)
    for view in views:
        decode_records(data, view.position)  # CRC-valid batches from a valid producer decode
    try:
        for view in iter_batches(data, 1 << 16, verify_crc):
            check_batch(data, view.position, len(data) - view.position, 1 << 16, verify_crc)
            decode_records(data, view.position)
    except WireError:
        pass


# Batches of every codec and of both record decoders' shapes (uniform, mixed with headers).
CODEC_BATCHES = [
    build_batch(
        [(7 + i % 3, None, b"u" * 30, None) for i in range(80)]
        + [(9, b"key", b"w" * 5, [("h", None), ("i", b"x")])],
        codec,
    )
    for codec in Compression
] + [build_batch([(5 + i, None, b"same" * 9, None) for i in range(70)])]


@FUZZ
@given(which=st.sampled_from(CODEC_BATCHES), ops=ops)
def test_crc_valid_batches_with_mutated_records(which: bytes, ops: list[Any]) -> None:
    """What a buggy producer could send: the CRC and length are right, the records are not.
    Both decoders (wire's, the consumer's) raise only their typed error, and agree.
    (Spark's decoder: tests/unit/spark_io/test_spark_arrow.py.)"""
    body = mutate(which[HEADER_SIZE:], ops, fix_length=False)
    batch = bytearray(which[:HEADER_SIZE] + body)
    struct.pack_into(">i", batch, 8, len(batch) - LENGTH_PREFIX_SIZE)
    struct.pack_into(">I", batch, CRC_OFFSET, crc32c.crc32c(batch[CRC_START:]))
    data = bytes(batch)
    try:
        check_batch(data, 0, len(data), 1 << 16)
    except WireError:
        return
    try:
        records = decode_records(data)
    except WireError:
        records = None
    try:
        consumed, _ = decode_record_set(data, "t", 0, 0, True)
    except CorruptMessageError:
        assert records is None
    else:
        assert records is not None
        assert [(r.key, r.value) for r in consumed] == [(r.key, r.value) for r in records]
