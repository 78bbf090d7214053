"""Refusals answered without a message of rillet's carry Kafka's message for the error, on
every Kafka response that has a message field (kafka-python reads some results by their
message alone); a message of rillet's is kept."""

from __future__ import annotations

import pytest
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.admin.configs import (
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)
from kafka_front_end import forwarded

from rillet.broker.kafka.codec import encode_response
from rillet.broker.kafka.error_map import kafka_message
from rillet.wire import messages as m
from rillet.wire.error_codes import ErrorCode

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_a_refusal_without_a_message_gets_kafkas() -> None:
    assert kafka_message(ErrorCode.NONE, None) is None
    assert kafka_message(ErrorCode.INVALID_CONFIG, "retention.ms: not a number") == (
        "retention.ms: not a number"
    )
    assert kafka_message(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None) == (
        "Cluster authorization failed."
    )
    assert kafka_message(ErrorCode.OUT_OF_ORDER_SEQUENCE, "") == (
        "The request failed: OUT_OF_ORDER_SEQUENCE"
    )
    assert kafka_message(12345, None) == "error 12345"
    specific = {ErrorCode.RESOURCE_NOT_FOUND: "no such user"}
    assert kafka_message(ErrorCode.RESOURCE_NOT_FOUND, None, specific) == "no such user"


def _create_topics() -> CreateTopicsRequest:
    ct = CreateTopicsRequest
    return ct(
        topics=[
            ct.CreatableTopic(
                name=name, num_partitions=1, replication_factor=1, assignments=[], configs=[]
            )
            for name in ("a", "b")
        ],
        timeout_ms=1000,
        validate_only=False,
    )


def test_create_topics_refusals_carry_a_message() -> None:
    schema, action = forwarded(_create_topics(), 4)
    answer = action.reply(
        m.CreateTopicsResponse(
            [
                m.TopicResult("a", ErrorCode.TOPIC_ALREADY_EXISTS),
                m.TopicResult("b", ErrorCode.INVALID_CONFIG, "segment.bytes: too small"),
            ]
        )
    )
    decoded = CreateTopicsResponse.decode(
        encode_response(1, schema, answer), version=4, header=True, framed=True
    )
    assert [(t.name, t.error_code, t.error_message) for t in decoded.topics] == [
        ("a", 36, "Topic with this name already exists."),
        ("b", 40, "segment.bytes: too small"),
    ]
    refused = action.fail(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    decoded = CreateTopicsResponse.decode(
        encode_response(1, schema, refused), version=4, header=True, framed=True
    )
    assert {t.error_message for t in decoded.topics} == {"Cluster authorization failed."}


def test_config_change_refusals_carry_a_message() -> None:
    r = IncrementalAlterConfigsRequest
    res, cfg = r.AlterConfigsResource, r.AlterConfigsResource.AlterableConfig
    request = r(
        resources=[
            res(
                resource_type=2,
                resource_name="t",
                configs=[cfg(name="retention.ms", config_operation=0, value="5")],
            )
        ],
        validate_only=False,
    )
    schema, action = forwarded(request, 1)
    decoded = IncrementalAlterConfigsResponse.decode(
        encode_response(1, schema, action.fail(ErrorCode.NOT_CONTROLLER)),
        version=1,
        header=True,
        framed=True,
    )
    assert [(x.error_code, x.error_message) for x in decoded.responses] == [
        (41, "This is not the correct controller for this cluster.")
    ]
    answer = action.reply(m.AlterTopicConfigsResponse([m.TopicResult("t", 40)]))
    decoded = IncrementalAlterConfigsResponse.decode(
        encode_response(1, schema, answer), version=1, header=True, framed=True
    )
    assert decoded.responses[0].error_message == "Configuration is invalid."
