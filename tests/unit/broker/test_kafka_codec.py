"""The Kafka codec against an independent oracle: kafka-python's protocol classes.

Requests encoded by kafka-python decode here into the internal requests the handlers see;
responses encoded here decode in kafka-python to the values given. Property tests draw the
topics, partitions, offsets and record bytes.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.protocol.admin import CreateTopicsRequest, DeleteTopicsRequest
from kafka.protocol.consumer import FetchRequest, FetchResponse, ListOffsetsRequest
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    MetadataRequest,
    MetadataResponse,
)
from kafka.protocol.producer import InitProducerIdRequest, ProduceRequest, ProduceResponse
from kafka_front_end import StaticView, forwarded, received
from kio.index import load_response_schema
from kio.serial import entity_writer

from rillet.broker.kafka.api_table import SUPPORTED
from rillet.broker.kafka.codec import (
    encode_response,
    frame_parts,
    unsupported_api_versions,
)
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.fetch_response import FetchedPartition, encode_fetch_body
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import Answer, Forward, KafkaEndpoint, RawBody
from rillet.wire import messages as m
from rillet.wire.error_codes import ErrorCode

# kafka-python reads its bundled JSON schemas with a deprecated importlib call.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

names = st.text(alphabet="abcxyz-_.", min_size=1, max_size=12)
int32s = st.integers(0, 2**31 - 1)
offsets = st.integers(0, 2**62)


def sent(parts: list[Any]) -> bytes:
    return b"".join(bytes(p) for p in parts)


@settings(max_examples=40, deadline=None)
@given(
    version=st.integers(3, 8),
    acks=st.sampled_from([0, 1, -1]),
    timeout_ms=int32s,
    topics=st.dictionaries(
        names, st.dictionaries(int32s, st.binary(max_size=64), min_size=1, max_size=3), max_size=3
    ),
)
def test_produce_requests_become_the_internal_request(
    version: int, acks: int, timeout_ms: int, topics: dict[str, dict[int, bytes]]
) -> None:
    r = ProduceRequest
    request = r(
        transactional_id=None,
        acks=acks,
        timeout_ms=timeout_ms,
        topic_data=[
            r.TopicProduceData(
                name=name,
                partition_data=[
                    r.TopicProduceData.PartitionProduceData(index=i, records=data)
                    for i, data in parts.items()
                ],
            )
            for name, parts in topics.items()
        ],
    )
    header, schema, entity = received(request, version)
    assert (header.api_key, header.api_version, header.correlation_id) == (0, version, 7)
    assert header.client_id == "oracle"
    action = translate(schema, entity, StaticView())
    assert isinstance(action, Forward)
    expected = [
        m.ProducePartitionData(name, i, data)
        for name, parts in topics.items()
        for i, data in parts.items()
    ]
    # acks=0 stays acks=0 inside (nothing is sent back; a failure closes the connection)
    assert action.native == m.ProduceRequest(acks, timeout_ms, expected)
    assert action.unanswered == (acks == 0)
    answers = [
        m.ProducePartitionResponse(p.topic, p.partition, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1)
        for p in expected
    ]
    body = encode_response(7, schema, action.reply(m.ProduceResponse(answers)))
    decoded = ProduceResponse.decode(body, version=version, header=True, framed=True)
    got = [
        (t.name, p.index, p.error_code) for t in decoded.responses for p in t.partition_responses
    ]
    assert got == [(p.topic, p.partition, 6) for p in expected]


@pytest.mark.parametrize("version", [7, 8])
def test_produce_v8_tells_why_a_partition_was_refused(version: int) -> None:
    r = ProduceRequest
    request = r(
        transactional_id=None,
        acks=-1,
        timeout_ms=1000,
        topic_data=[
            r.TopicProduceData(
                name="t",
                partition_data=[
                    r.TopicProduceData.PartitionProduceData(index=i, records=b"x") for i in (0, 1)
                ],
            )
        ],
    )
    _h, schema, entity = received(request, version)
    action = translate(schema, entity, StaticView())
    assert isinstance(action, Forward)
    why = "batch 0: timestamp 5 is 99 ms before the broker's clock; ..."
    answers = [
        m.ProducePartitionResponse("t", 0, ErrorCode.INVALID_TIMESTAMP, -1, error_message=why),
        m.ProducePartitionResponse("t", 1, ErrorCode.NONE, 10, error_message="ignored"),
    ]
    body = encode_response(7, schema, action.reply(m.ProduceResponse(answers)))
    decoded = ProduceResponse.decode(body, version=version, header=True, framed=True)
    parts = decoded.responses[0].partition_responses
    assert [(p.error_code, p.base_offset) for p in parts] == [(32, -1), (0, 10)]
    if version >= 8:
        assert [(p.error_message, p.record_errors) for p in parts] == [(why, []), (None, [])]
    failed = encode_response(7, schema, action.fail(ErrorCode.NOT_LEADER_OR_FOLLOWER))
    decoded = ProduceResponse.decode(failed, version=version, header=True, framed=True)
    assert {p.error_code for p in decoded.responses[0].partition_responses} == {6}


def test_a_transactional_produce_carries_its_transactional_id() -> None:
    r = ProduceRequest
    request = r(
        transactional_id="tx",
        acks=-1,
        timeout_ms=10,
        topic_data=[
            r.TopicProduceData(
                name="t",
                partition_data=[r.TopicProduceData.PartitionProduceData(index=0, records=b"")],
            )
        ],
    )
    _h, schema, entity = received(request, 7)
    action = translate(schema, entity, StaticView())
    assert isinstance(action, Forward)
    assert action.native.transactional_id == "tx"


@settings(max_examples=40, deadline=None)
@given(
    version=st.integers(4, 11),
    partitions=st.lists(
        st.tuples(names, int32s, offsets, int32s, st.binary(max_size=80)),
        min_size=1,
        max_size=5,
        unique_by=lambda e: (e[0], e[1]),  # Kafka keeps one entry per partition, as here
    ),
    hw=offsets,
)
def test_fetch_requests_and_responses_round_trip_through_the_oracle(
    version: int, partitions: list[tuple[str, int, int, int, bytes]], hw: int
) -> None:
    r = FetchRequest
    request = r(
        replica_id=5,  # a client claiming to be a follower is served as a consumer
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=1 << 20,
        isolation_level=1,
        topics=[
            r.FetchTopic(
                topic=topic,
                partitions=[
                    r.FetchTopic.FetchPartition(
                        partition=p, fetch_offset=off, partition_max_bytes=limit
                    )
                ],
            )
            for topic, p, off, limit, _ in partitions
        ],
    )
    _schema, action = forwarded(request, version)
    native = action.native
    assert native.replica_id == -1
    assert (native.max_wait_ms, native.min_bytes) == (500, 1)
    assert [
        (p.topic, p.partition, p.fetch_offset, p.partition_max_bytes) for p in native.partitions
    ] == [(t, p, off, limit) for t, p, off, limit, _ in partitions]
    answers = [
        m.FetchPartitionResponse(t, p, ErrorCode.NONE, hw, 3, data)
        for t, p, _, _, data in partitions
    ]
    body = action.reply(m.FetchResponse(answers))
    assert isinstance(body, RawBody)
    decoded = FetchResponse.decode(
        sent(frame_parts(9, body.parts)), version=version, header=True, framed=True
    )
    got = [
        (
            t.topic,
            p.partition_index,
            p.error_code,
            p.high_watermark,
            p.last_stable_offset,
            bytes(p.records or b""),
        )
        for t in decoded.responses
        for p in t.partitions
    ]
    assert got == [(t, p, 0, hw, hw, data) for t, p, _, _, data in partitions]
    if version >= 11:
        assert all(p.preferred_read_replica == -1 for t in decoded.responses for p in t.partitions)


def test_the_hand_encoded_fetch_response_equals_kio_s() -> None:
    for version in range(4, 12):
        parts = [FetchedPartition(0, 0, 10, 2, b"abc"), FetchedPartition(1, 6, -1, -1, b"")]
        ours = sent(encode_fetch_body(version, [("t", parts)]))
        cls = load_response_schema(1, version)
        entity = build(
            cls,
            {
                "throttle_time": 0,
                "error_code": 0,
                "session_id": 0,
                "responses": [
                    {
                        "topic": "t",
                        "partitions": [
                            {
                                "partition_index": p.partition,
                                "error_code": p.error_code,
                                "high_watermark": p.high_watermark,
                                "last_stable_offset": p.high_watermark,
                                "log_start_offset": p.log_start_offset,
                                "aborted_transactions": (),
                                "preferred_read_replica": -1,
                                "records": p.records,
                            }
                            for p in parts
                        ],
                    }
                ],
            },
        )
        buf = io.BytesIO()
        entity_writer(cls)(buf, entity)
        assert ours == buf.getvalue(), version


def test_metadata_names_brokers_by_their_kafka_listeners() -> None:
    view = StaticView(
        {1: KafkaEndpoint(1, "h1", 19092, "r1"), 2: KafkaEndpoint(2, "h2", 19093, None)}
    )
    for version in range(1, 9):
        request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="t")])
        if version >= 4:
            request.allow_auto_topic_creation = True
        _h, schema, entity = received(request, version)
        action = translate(schema, entity, view)
        assert isinstance(action, Forward)
        assert action.native == m.MetadataRequest(["t"], -1, allow_auto_topic_creation=True)
        native = m.MetadataResponse(
            "cid",
            1,
            [m.BrokerInfo(1, "n1", 1), m.BrokerInfo(2, "n2", 2), m.BrokerInfo(3, "n3", 3)],
            [m.TopicMetadata("t", 0, [m.PartitionMetadata(0, 2, 4, [1, 2, 3], [1, 2])])],
        )
        data = encode_response(3, schema, action.reply(native))
        decoded = MetadataResponse.decode(data, version=version, header=True, framed=True)
        assert [(b.node_id, b.host, b.port, b.rack) for b in decoded.brokers] == [
            (1, "h1", 19092, "r1"),
            (2, "h2", 19093, None),
        ]
        assert decoded.controller_id == 1
        (topic,) = decoded.topics
        (p,) = topic.partitions
        assert (p.leader_id, list(p.replica_nodes), list(p.isr_nodes)) == (2, [1, 2, 3], [1, 2])
        if version >= 5:
            assert list(p.offline_replicas) == [3]
        if version >= 7:
            assert p.leader_epoch == 4


def test_metadata_carries_kafkas_auto_creation_flag() -> None:
    """v4+ says whether the client allows auto-creation (kafka-python, the Java consumer
    and librdkafka's consumer may say no); before v4 every request allowed it."""
    for version, allow in [(1, True), (3, True), (4, False), (8, False), (8, True)]:
        request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="t")])
        if version >= 4:
            request.allow_auto_topic_creation = allow
        _h, schema, entity = received(request, version)
        action = translate(schema, entity, StaticView())
        assert isinstance(action, Forward)
        assert action.native.allow_auto_topic_creation is allow, version


def test_a_refused_all_topics_metadata_lists_every_known_topic_with_the_error() -> None:
    """An empty topic list told librdkafka a 6-partition topic had 0 partitions and failed
    every record queued for it; a topic with an error and no partitions keeps its count."""
    view = StaticView(topics=["orders", "audit"])
    for version in (1, 4, 8):
        request = MetadataRequest(topics=None)
        if version >= 4:
            request.allow_auto_topic_creation = False
        _h, schema, entity = received(request, version)
        action = translate(schema, entity, view)
        assert isinstance(action, Forward) and action.native.topics is None
        failed = action.fail(ErrorCode.LEADER_NOT_AVAILABLE)
        data = encode_response(3, schema, failed)
        decoded = MetadataResponse.decode(data, version=version, header=True, framed=True)
        assert [(t.name, t.error_code, list(t.partitions)) for t in decoded.topics] == [
            ("orders", ErrorCode.LEADER_NOT_AVAILABLE, []),
            ("audit", ErrorCode.LEADER_NOT_AVAILABLE, []),
        ]


def test_api_versions_lists_exactly_the_served_table_in_every_version() -> None:
    for version in range(5):
        _h, schema, entity = received(ApiVersionsRequest(), version)
        action = translate(schema, entity, StaticView())
        assert isinstance(action, Answer)
        data = encode_response(1, schema, action.response)
        decoded = ApiVersionsResponse.decode(data, version=version, header=True, framed=True)
        assert decoded.error_code == 0
        got = {k.api_key: (k.min_version, k.max_version) for k in decoded.api_keys}
        assert got == SUPPORTED


def test_an_api_versions_version_above_ours_gets_error_35_with_the_table_in_v0() -> None:
    decoded = ApiVersionsResponse.decode(
        unsupported_api_versions(5), version=0, header=True, framed=True
    )
    assert decoded.error_code == 35
    assert {k.api_key: (k.min_version, k.max_version) for k in decoded.api_keys} == SUPPORTED


def test_list_offsets_create_and_delete_topics_and_init_producer_id_translate() -> None:
    lo = ListOffsetsRequest
    for version in range(1, 6):
        request = lo(
            replica_id=-1,
            topics=[
                lo.ListOffsetsTopic(
                    name="t",
                    partitions=[
                        lo.ListOffsetsTopic.ListOffsetsPartition(partition_index=2, timestamp=-2)
                    ],
                )
            ],
        )
        _schema, action = forwarded(request, version)
        assert action.native == m.ListOffsetsRequest([m.ListOffsetsPartition("t", 2, -2)])
    ct = CreateTopicsRequest
    for version in range(2, 5):
        request = ct(
            topics=[
                ct.CreatableTopic(
                    name="t",
                    num_partitions=3,
                    replication_factor=2,
                    assignments=[],
                    configs=[
                        ct.CreatableTopic.CreatableTopicConfig(name="retention.ms", value="5")
                    ],
                )
            ],
            timeout_ms=1000,
            validate_only=False,
        )
        _schema, action = forwarded(request, version)
        assert action.native == m.CreateTopicsRequest(
            [m.NewTopic("t", 3, 2, {"retention.ms": "5"})], 1000, False
        )
    for version in range(1, 4):
        _schema, action = forwarded(
            DeleteTopicsRequest(topic_names=["a", "b"], timeout_ms=5), version
        )
        assert action.native == m.DeleteTopicsRequest(["a", "b"], 5)
    for version in range(2):
        _schema, action = forwarded(
            InitProducerIdRequest(transactional_id="tx", transaction_timeout_ms=100), version
        )
        assert action.native == m.InitProducerIdRequest("tx", 100)
        fenced = action.reply(m.InitProducerIdResponse(ErrorCode.PRODUCER_FENCED))
        assert int(fenced.error_code) == 90


def test_an_acks_0_produce_stays_acks_0_inside_and_gets_no_answer() -> None:
    r = ProduceRequest
    request = r(
        transactional_id=None,
        acks=0,
        timeout_ms=100,
        topic_data=[
            r.TopicProduceData(
                name="t",
                partition_data=[r.TopicProduceData.PartitionProduceData(index=0, records=b"x")],
            )
        ],
    )
    _schema, action = forwarded(request, 7)
    assert action.native.acks == 0 and action.unanswered


def test_produce_v8_names_the_records_that_made_a_batch_invalid() -> None:
    r = ProduceRequest
    data = r.TopicProduceData(
        name="t", partition_data=[r.TopicProduceData.PartitionProduceData(index=0, records=b"x")]
    )
    request = r(transactional_id=None, acks=-1, timeout_ms=1000, topic_data=[data])
    schema, action = forwarded(request, 8)
    why = "2 of 5 records have no key (the first: record 1): ..."
    refused = m.ProducePartitionResponse(
        "t", 0, ErrorCode.INVALID_RECORD, error_message=why, invalid_records=[1, 3]
    )
    body = encode_response(7, schema, action.reply(m.ProduceResponse([refused])))
    decoded = ProduceResponse.decode(body, version=8, header=True, framed=True)
    (part,) = decoded.responses[0].partition_responses
    assert (part.error_code, part.error_message) == (87, why)
    assert [(e.batch_index, e.batch_index_error_message) for e in part.record_errors] == [
        (1, why),
        (3, why),
    ]
