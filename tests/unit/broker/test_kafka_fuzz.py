"""Fuzzed Kafka decoding: any bytes end in a decoded request or a KafkaProtocolError (the
listener closes that one connection), never another exception."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.producer import ProduceRequest
from kafka_front_end import StaticView

from rillet.broker.kafka.api_table import SUPPORTED, served_versions
from rillet.broker.kafka.codec import decode_body, decode_header, schema_for
from rillet.broker.kafka.errors import KafkaFrameTooLarge, KafkaProtocolError
from rillet.broker.kafka.framing import KafkaFrameDecoder
from rillet.broker.kafka.front_end import translate

# kafka-python reads its bundled JSON schemas with a deprecated importlib call.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

served = st.sampled_from(served_versions())


def decode(frame: bytes) -> None:
    header, start = decode_header(frame)
    schema = schema_for(header)
    request = decode_body(frame, start, schema)
    translate(schema, request, StaticView())


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    key=served, client_id=st.one_of(st.none(), st.text(max_size=8)), body=st.binary(max_size=200)
)
def test_random_bodies_of_served_apis_decode_or_raise_a_protocol_error(
    key: tuple[int, int], client_id: str | None, body: bytes
) -> None:
    api_key, version = key
    cid = b"\xff\xff" if client_id is None else struct.pack(">h", len(client_id.encode()))
    cid += (client_id or "").encode()
    frame = struct.pack(">hhi", api_key, version, 1) + cid + body
    try:
        decode(frame)
    except KafkaProtocolError:
        pass


@settings(max_examples=300, deadline=None)
@given(frame=st.binary(max_size=64))
def test_random_frames_decode_or_raise_a_protocol_error(frame: bytes) -> None:
    try:
        decode(frame)
    except KafkaProtocolError:
        pass


@settings(max_examples=200, deadline=None)
@given(chunks=st.lists(st.binary(max_size=40), max_size=10), limit=st.integers(0, 64))
def test_the_frame_decoder_yields_frames_within_the_limit_or_refuses(
    chunks: list[bytes], limit: int
) -> None:
    decoder = KafkaFrameDecoder(limit)
    try:
        for chunk in chunks:
            decoder.feed(chunk)
            while (frame := decoder.next_frame()) is not None:
                assert len(frame) <= limit
    except KafkaFrameTooLarge:
        pass


def test_truncations_of_valid_requests_never_escape_as_other_errors() -> None:
    r = ProduceRequest
    request = r(
        transactional_id=None,
        acks=-1,
        timeout_ms=100,
        topic_data=[
            r.TopicProduceData(
                name="topic",
                partition_data=[
                    r.TopicProduceData.PartitionProduceData(index=1, records=b"x" * 30)
                ],
            )
        ],
    )
    request.with_header(correlation_id=3, client_id="c")
    low, high = SUPPORTED[0]
    for version in range(low, high + 1):
        frame = bytes(request.encode(version=version, header=True))
        for cut in range(len(frame)):
            try:
                decode(frame[:cut])
            except KafkaProtocolError:
                pass


def test_a_null_array_the_schema_does_not_allow_is_a_protocol_error() -> None:
    """Found by the fuzzer: IncrementalAlterConfigs v1 with its resources as a null compact
    array reached the translator as None."""
    frame = struct.pack(">hhi", 44, 1, 1) + b"\xff\xff" + b"\x00\x00\x00\x00"
    with pytest.raises(KafkaProtocolError, match="resources is null"):
        decode(frame)
