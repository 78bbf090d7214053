"""ConsumerGroupHeartbeat (68), ConsumerGroupDescribe (69) and Metadata's topic ids through
the Kafka codec. kafka-python has no classes for 68 and 69, so requests are written with
kio's request writers and answers read with its response readers (bytes in, bytes out)."""

from __future__ import annotations

import datetime
import io
import struct
import uuid
from typing import Any

import pytest
from kafka_front_end import StaticView
from kio.index import load_request_schema
from kio.serial import entity_reader, entity_writer

from rillet.broker.kafka.api_table import SUPPORTED
from rillet.broker.kafka.codec import decode_body, decode_header, encode_response, schema_for
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import Caller, Forward
from rillet.wire import group_messages as gm
from rillet.wire import messages as m
from rillet.wire.error_codes import ErrorCode

TOPIC_ID = "5f0c7d6e-3c1b-4f7e-9a59-0d3c7a1f2b44"


def through_listener(api_key: int, version: int, **fields: Any) -> tuple[Any, Forward]:
    """The listener's Forward for a request written by kio (header v2, flexible)."""
    cls = load_request_schema(api_key, version)
    body = io.BytesIO()
    entity_writer(cls)(body, cls(**fields))
    client_id = b"kio-client"
    head = struct.pack(">hhih", api_key, version, 11, len(client_id)) + client_id + b"\0"
    frame = head + body.getvalue()
    header, start = decode_header(frame)
    schema = schema_for(header)
    entity = decode_body(frame, start, schema)
    action = translate(schema, entity, StaticView(), Caller(header.client_id, "10.0.0.9"))
    assert isinstance(action, Forward)
    return schema, action


def answered(schema: Any, response: Any) -> Any:
    data = encode_response(11, schema, response)
    # size, correlation id, the response header's empty tagged fields, then the body
    entity, _ = entity_reader(schema.response_type)(memoryview(data), 9)
    return entity


def test_apiversions_advertises_both_apis_in_versions_0_and_1() -> None:
    assert SUPPORTED[68] == (0, 1) and SUPPORTED[69] == (0, 1)
    assert SUPPORTED[3][1] >= 12  # Metadata names topic ids


@pytest.mark.parametrize("version", [0, 1])
def test_a_join_becomes_the_coordinator_s_heartbeat_by_topic_id(version: int) -> None:
    from kio.schema.consumer_group_heartbeat.v0.request import TopicPartitions

    extra = {"subscribed_topic_regex": None} if version else {}
    schema, action = through_listener(
        68,
        version,
        group_id="g",
        member_id="m-1",
        member_epoch=0,
        instance_id=None,
        rack_id=None,
        rebalance_timeout=datetime.timedelta(seconds=30),
        subscribed_topic_names=("orders",),
        server_assignor="range",
        topic_partitions=(TopicPartitions(topic_id=uuid.UUID(TOPIC_ID), partitions=(4,)),),
        **extra,
    )
    assert schema.flexible
    assert action.native == gm.ConsumerGroupHeartbeatRequest(
        "g",
        "m-1",
        0,
        topics=["orders"],
        assignor="range",
        client_host="10.0.0.9",
        owned=[gm.GroupTopicPartitions(TOPIC_ID, [4])],
        member_epoch=0,
        by_topic_id=True,
        keep_pattern=True,
        client_id="kio-client",
    )
    native = gm.ConsumerGroupHeartbeatResponse(
        ErrorCode.NONE, "m-1", 7, 300, [gm.GroupTopicPartitions("orders", [0, 2], TOPIC_ID)]
    )
    decoded = answered(schema, action.reply(native))
    assert (decoded.member_id, decoded.member_epoch, decoded.error_code.value) == ("m-1", 7, 0)
    assert decoded.heartbeat_interval.total_seconds() == 0.3
    (tp,) = decoded.assignment.topic_partitions
    assert (str(tp.topic_id), tp.partitions) == (TOPIC_ID, (0, 2))


def test_nulls_are_unchanged_and_errors_carry_no_assignment() -> None:
    schema, action = through_listener(
        68,
        1,
        group_id="g",
        member_id="m-1",
        member_epoch=7,
        instance_id="i",
        rack_id=None,
        rebalance_timeout=datetime.timedelta(seconds=-0.001),
        subscribed_topic_names=None,
        subscribed_topic_regex="ord.*",
        server_assignor=None,
        topic_partitions=None,
    )
    native = action.native
    assert (native.keep_topics, native.keep_pattern, native.owned) == (True, False, None)
    assert (native.pattern, native.assignor, native.instance_id) == ("ord.*", "", "i")
    fenced = answered(schema, action.fail(ErrorCode.FENCED_MEMBER_EPOCH))
    assert (fenced.error_code.value, fenced.assignment, fenced.member_epoch) == (110, None, 0)
    left = gm.ConsumerGroupHeartbeatResponse(ErrorCode.NONE, "m-1", -1)
    decoded = answered(schema, action.reply(left))
    assert (decoded.member_epoch, decoded.assignment) == (-1, None)


@pytest.mark.parametrize("version", [0, 1])
def test_describe_names_members_topics_by_id_and_name(version: int) -> None:
    schema, action = through_listener(
        69, version, group_ids=("g", "classic", "nope"), include_authorized_operations=False
    )
    assert action.native == gm.DescribeGroupsRequest(["g", "classic", "nope"])
    parts = [gm.GroupTopicPartitions("orders", [0, 1], TOPIC_ID)]
    member = gm.MemberDescription(
        "m-1", None, "/10.0.0.9", ["orders"], None, parts, parts, 4, "rdkafka"
    )
    classic = gm.MemberDescription(
        "c-1", None, "/10.0.0.8", ["orders"], None, [], [], 4, "java", classic_protocol="range"
    )
    native = gm.DescribeGroupsResponse(
        [
            gm.GroupDescription("g", ErrorCode.NONE, 4, "sticky", [member, classic]),
            gm.GroupDescription("classic", ErrorCode.NONE, 2, "range", [], classic=True),
            gm.GroupDescription("nope", ErrorCode.GROUP_ID_NOT_FOUND),
        ]
    )
    g, classic_group, nope = answered(schema, action.reply(native)).groups
    assert (g.group_state, g.group_epoch, g.assignor_name) == ("Stable", 4, "uniform")
    d, c = g.members
    assert (d.member_id, d.member_epoch, d.client_id, d.client_host) == (
        "m-1",
        4,
        "rdkafka",
        "/10.0.0.9",
    )
    (tp,) = d.assignment.topic_partitions
    assert (str(tp.topic_id), tp.topic_name, tp.partitions) == (TOPIC_ID, "orders", (0, 1))
    if version >= 1:
        assert (d.member_type, c.member_type) == (1, 0)  # consumer, classic
    assert classic_group.error_code.value == nope.error_code.value == 69


def test_metadata_v10_and_later_name_topic_ids_and_answer_requests_by_id() -> None:
    from kio.schema.metadata.v12.request import MetadataRequestTopic

    other = str(uuid.uuid4())
    schema, action = through_listener(
        3,
        12,
        topics=(
            MetadataRequestTopic(topic_id=uuid.UUID(TOPIC_ID), name=None),
            MetadataRequestTopic(topic_id=uuid.UUID(other), name=None),
        ),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    assert action.native == m.MetadataRequest(None)  # by id: every topic, then kept
    native = m.MetadataResponse(
        "cid",
        1,
        [],
        [
            m.TopicMetadata("orders", 0, [], topic_id=TOPIC_ID),
            m.TopicMetadata("other", 0, [], topic_id=str(uuid.uuid4())),
        ],
    )
    orders, unknown = answered(schema, action.reply(native)).topics
    assert (orders.name, str(orders.topic_id)) == ("orders", TOPIC_ID)
    assert (unknown.error_code.value, str(unknown.topic_id)) == (100, other)


def test_the_heartbeat_needs_read_and_describe_needs_describe_on_the_group() -> None:
    """Both go as the native requests the dispatcher authorizes before any handler runs."""
    from test_request_authorization import ALICE, acl, authorizer

    from rillet.wire.acls import Operation, ResourceType
    from rillet.wire.messages import API_OF_REQUEST

    _schema, beat = through_listener(
        68, 1, group_id="billing", member_id="m", member_epoch=0, instance_id=None,
        rack_id=None, rebalance_timeout=datetime.timedelta(seconds=30),
        subscribed_topic_names=("orders",), subscribed_topic_regex=None,
        server_assignor=None, topic_partitions=(),
    )  # fmt: skip
    _schema, describe = through_listener(
        69, 1, group_ids=("billing",), include_authorized_operations=False
    )
    denied, _ = authorizer()
    for action in (beat, describe):
        verdict = denied.check(API_OF_REQUEST[type(action.native)], action.native, ALICE)
        assert verdict is not None and verdict.error == ErrorCode.GROUP_AUTHORIZATION_FAILED
    readers, _ = authorizer(acl(ResourceType.GROUP, "billing", Operation.READ))
    assert readers.check(API_OF_REQUEST[type(beat.native)], beat.native, ALICE) is None
