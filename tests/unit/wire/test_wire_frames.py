"""Frame decoder, schemas and protocol envelopes; fuzzing that only WireError escapes."""

from __future__ import annotations

import random
import struct

import cbor2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.wire import messages as m
from rillet.wire.api import ApiKey
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode
from rillet.wire.errors import FrameTooLarge, MalformedFrame, MalformedMessage, WireError
from rillet.wire.frame import FrameDecoder, encode_frame
from rillet.wire.protocol import (
    ErrorResponse,
    decode_request,
    decode_response,
    encode_error_response,
    encode_request,
    encode_response,
)


def joined(parts: list) -> bytes:  # type: ignore[type-arg]
    return b"".join(bytes(p) for p in parts)


BATCH = build_batch([(1, b"k", b"v", [("h", b"x")])])
REQUESTS = [
    m.ProduceRequest(
        -1, 1000, [m.ProducePartitionData("t", 0, BATCH), m.ProducePartitionData("u", 3, BATCH)]
    ),
    m.FetchRequest(500, 1, 1 << 20, [m.FetchPartition("t", 0, 5, 1024, 2, 1)]),
    m.ListOffsetsRequest([m.ListOffsetsPartition("t", 0, -2)]),
    m.MetadataRequest(None),
    m.MetadataRequest(["a", "b"]),
    m.CreateTopicsRequest([m.NewTopic("t", 3, 1, {"retention.ms": "5"})], 100, True),
    m.DeleteTopicsRequest(["t"]),
    m.ApiVersionsRequest(),
]


@pytest.mark.parametrize("request_body", REQUESTS, ids=lambda r: type(r).__name__)
def test_requests_round_trip(request_body: object) -> None:
    decoder = FrameDecoder()
    decoder.feed(joined(encode_request(42, request_body, "cli")))
    frame = decoder.next_frame()
    assert frame is not None
    header, body = decode_request(frame)
    assert header.correlation_id == 42 and header.client_id == "cli"
    normalise = lambda x: joined(encode_request(1, x))  # noqa: E731 - blobs compare as bytes
    assert normalise(body) == normalise(request_body)


def test_responses_and_error_responses_round_trip() -> None:
    response = m.FetchResponse([m.FetchPartitionResponse("t", 0, 0, 10, 0, BATCH)])
    decoder = FrameDecoder()
    decoder.feed(
        joined(encode_response(7, response))
        + joined(encode_error_response(8, ErrorCode.INVALID_REQUEST, "bad"))
    )
    first, second = decoder.next_frame(), decoder.next_frame()
    assert first is not None and second is not None
    got = decode_response(first, m.FetchResponse)
    assert bytes(got.partitions[0].records) == BATCH
    err = decode_response(second, m.FetchResponse)
    assert err == ErrorResponse(8, ErrorCode.INVALID_REQUEST, "bad")
    assert ErrorCode.from_wire(99999) is ErrorCode.UNKNOWN_SERVER_ERROR


@settings(max_examples=100, deadline=None)
@given(chunks=st.lists(st.integers(1, 64), min_size=1, max_size=50))
def test_decoder_reassembles_any_chunking(chunks: list[int]) -> None:
    stream = b"".join(joined(encode_request(i, r)) for i, r in enumerate(REQUESTS))
    decoder = FrameDecoder()
    frames, pos, k = [], 0, 0
    while pos < len(stream):
        step = chunks[k % len(chunks)]
        decoder.feed(stream[pos : pos + step])
        pos, k = pos + step, k + 1
        while (f := decoder.next_frame()) is not None:
            frames.append(f)
    assert [decode_request(f)[0].correlation_id for f in frames] == list(range(len(REQUESTS)))


def test_oversized_frame_is_fatal_and_malformed_frames_are_skippable() -> None:
    d = FrameDecoder(max_frame_bytes=1000)
    d.feed(struct.pack(">I", 1001))
    with pytest.raises(FrameTooLarge):
        d.next_frame()
    d = FrameDecoder()
    bad_blobs = cbor2.dumps({"correlation_id": 3, "blobs": [100]})
    trailing = cbor2.dumps({"correlation_id": 4}) + b"extra"
    for body in (
        b"\xff\xff",
        cbor2.dumps([1, 2]),
        bad_blobs,
        trailing,
        cbor2.dumps({"blobs": [-1]}),
    ):
        d.feed(struct.pack(">I", len(body)) + body)
    d.feed(joined(encode_request(5, m.MetadataRequest())))
    cids = []
    for _ in range(5):
        with pytest.raises(MalformedFrame) as info:
            d.next_frame()
        cids.append(info.value.correlation_id)
    assert cids == [None, None, 3, 4, None]
    frame = d.next_frame()
    assert frame is not None and decode_request(frame)[0].correlation_id == 5


@pytest.mark.parametrize(
    "header",
    [
        {"api": 4242, "correlation_id": 1, "body": {}},
        {"api": int(ApiKey.PRODUCE), "correlation_id": 1, "body": {"acks": 1}},
        {
            "api": int(ApiKey.PRODUCE),
            "correlation_id": 1,
            "body": {"acks": True, "timeout_ms": 1, "partitions": []},
        },
        {
            "api": int(ApiKey.PRODUCE),
            "correlation_id": 1,
            "body": {
                "acks": 1,
                "timeout_ms": 1,
                "partitions": [{"topic": "t", "partition": 0, "records": 3}],
            },
        },
        {"api": int(ApiKey.METADATA), "correlation_id": 1, "body": {"topics": "all"}},
    ],
)
def test_schema_violations_are_malformed_messages_with_correlation_id(header: dict) -> None:  # type: ignore[type-arg]
    d = FrameDecoder()
    d.feed(joined(encode_frame(header)))
    frame = d.next_frame()
    assert frame is not None
    with pytest.raises(MalformedMessage) as info:
        decode_request(frame)
    assert info.value.correlation_id == 1


def test_missing_fields_with_defaults_take_the_default() -> None:
    d = FrameDecoder()
    d.feed(joined(encode_frame({"api": int(ApiKey.METADATA), "correlation_id": 1, "body": {}})))
    frame = d.next_frame()
    assert frame is not None
    assert decode_request(frame)[1] == m.MetadataRequest(None)


def mutate(frame: bytes, rng: random.Random) -> bytes:
    data = bytearray(frame)
    for _ in range(rng.randint(1, 6)):
        kind = rng.randrange(4)
        if kind == 0 and len(data) > 4:
            i = rng.randrange(4, len(data))
            data[i] ^= 1 << rng.randrange(8)
        elif kind == 1 and len(data) > 5:
            del data[rng.randrange(4, len(data)) :]
        elif kind == 2:
            i = rng.randrange(4, len(data) + 1)
            data[i:i] = rng.randbytes(rng.randint(1, 16))
        else:
            i = rng.randrange(4, len(data) + 1)
            data[i:i] = data[4 : 4 + rng.randint(1, 8)]
    struct.pack_into(">I", data, 0, len(data) - 4)
    return bytes(data)


@settings(max_examples=500, deadline=None)
@given(seed=st.integers(0, 2**32), which=st.integers(0, len(REQUESTS) - 1))
def test_fuzzed_frames_raise_only_wire_errors(seed: int, which: int) -> None:
    rng = random.Random(seed)
    payload = mutate(joined(encode_request(1, REQUESTS[which])), rng)
    d = FrameDecoder(max_frame_bytes=1 << 20)
    d.feed(payload)
    try:
        frame = d.next_frame()
        if frame is not None:
            decode_request(frame)
    except WireError:
        pass


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300))
def test_random_bytes_raise_only_wire_errors(data: bytes) -> None:
    d = FrameDecoder(max_frame_bytes=1 << 16)
    d.feed(data)
    try:
        while (frame := d.next_frame()) is not None:
            decode_request(frame)
    except WireError:
        pass
