"""IncrementalAlterConfigs (v1 flexible) and AlterConfigs against kafka-python's classes."""

from __future__ import annotations

import pytest
from kafka.protocol.admin.configs import (
    AlterConfigsRequest,
    AlterConfigsResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)
from kafka_front_end import forwarded, received

from rillet.broker.kafka.codec import encode_response
from rillet.broker.kafka.config_changes import NO_LOG_DIR_THROTTLE
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import Answer
from rillet.wire.broker_admin_messages import (
    AlterBrokerConfigsResponse,
    BrokerConfigChange,
    BrokerConfigResult,
)
from rillet.wire.messages import AlterTopicConfigsResponse, TopicConfigChange, TopicResult

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
TOPIC, BROKER = 2, 4


@pytest.mark.parametrize("version", [0, 1])
def test_incremental_set_and_delete_become_one_change_per_topic(version: int) -> None:
    r = IncrementalAlterConfigsRequest
    res, cfg = r.AlterConfigsResource, r.AlterConfigsResource.AlterableConfig
    request = r(
        resources=[
            res(
                resource_type=TOPIC,
                resource_name="t",
                configs=[
                    cfg(name="retention.ms", config_operation=0, value="5000"),
                    cfg(name="segment.ms", config_operation=1, value=None),
                ],
            ),
            res(resource_type=BROKER, resource_name="1", configs=[]),
            res(
                resource_type=TOPIC,
                resource_name="u",
                configs=[cfg(name="retention.ms", config_operation=2, value="5")],
            ),
            res(
                resource_type=TOPIC,
                resource_name="v",
                configs=[cfg(name="cleanup.policy", config_operation=2, value="compact")],
            ),
        ],
        validate_only=False,
    )
    schema, action = forwarded(request, version)
    assert action.native.topics == [
        TopicConfigChange("t", {"retention.ms": "5000"}, ["segment.ms"]),
        TopicConfigChange("v", append={"cleanup.policy": "compact"}),  # a list: APPEND applies
    ]
    answer = action.reply(AlterTopicConfigsResponse([TopicResult("t", 0), TopicResult("v", 0)]))
    decoded = IncrementalAlterConfigsResponse.decode(
        encode_response(3, schema, answer), version=version, header=True, framed=True
    )
    got = [(x.resource_type, x.resource_name, x.error_code) for x in decoded.responses]
    assert got == [(TOPIC, "t", 0), (BROKER, "1", 42), (TOPIC, "u", 40), (TOPIC, "v", 0)]


@pytest.mark.parametrize("version", [0, 1])
def test_alter_configs_replaces_a_topic_s_overrides(version: int) -> None:
    r = AlterConfigsRequest
    res = r.AlterConfigsResource
    request = r(
        resources=[
            res(
                resource_type=TOPIC,
                resource_name="t",
                configs=[res.AlterableConfig(name="segment.ms", value="600000")],
            )
        ],
        validate_only=True,
    )
    schema, action = forwarded(request, version)
    assert action.native.validate_only
    assert action.native.topics == [TopicConfigChange("t", {"segment.ms": "600000"}, [], True)]
    decoded = AlterConfigsResponse.decode(
        encode_response(3, schema, action.fail(40)), version=version, header=True, framed=True
    )
    assert [(x.resource_name, x.error_code) for x in decoded.responses] == [("t", 40)]


def test_only_broker_resources_are_answered_at_once() -> None:
    r = IncrementalAlterConfigsRequest
    request = r(
        resources=[r.AlterConfigsResource(resource_type=BROKER, resource_name="", configs=[])],
        validate_only=False,
    )
    _header, schema, entity = received(request, 1)
    action = translate(schema, entity, None)  # type: ignore[arg-type]
    assert isinstance(action, Answer)


def test_broker_throttle_rates_become_one_native_broker_change() -> None:
    """What ``kafka-reassign-partitions --execute --throttle`` and ``--verify`` send to the
    brokers: the rates set or removed per broker, "" being the cluster-wide default; the log
    dir throttle is removed as a no-op."""
    r = IncrementalAlterConfigsRequest
    res, cfg = r.AlterConfigsResource, r.AlterConfigsResource.AlterableConfig
    clear = [
        cfg(name="leader.replication.throttled.rate", config_operation=1, value=None),
        cfg(name="follower.replication.throttled.rate", config_operation=1, value=None),
        cfg(name=NO_LOG_DIR_THROTTLE, config_operation=1, value=None),
    ]
    request = r(
        resources=[
            res(resource_type=BROKER, resource_name="1", configs=clear),
            res(
                resource_type=BROKER,
                resource_name="",
                configs=[
                    cfg(name="leader.replication.throttled.rate", config_operation=0, value="9")
                ],
            ),
            res(resource_type=BROKER, resource_name="3", configs=clear[2:]),
        ],
        validate_only=False,
    )
    schema, action = forwarded(request, 1)
    assert action.native.changes == [
        BrokerConfigChange(
            1, {}, ["leader.replication.throttled.rate", "follower.replication.throttled.rate"]
        ),
        BrokerConfigChange(-1, {"leader.replication.throttled.rate": "9"}, []),
    ]
    answer = action.reply(
        AlterBrokerConfigsResponse([BrokerConfigResult(1, 0), BrokerConfigResult(-1, 40, "no")])
    )
    decoded = IncrementalAlterConfigsResponse.decode(
        encode_response(3, schema, answer), version=1, header=True, framed=True
    )
    got = [(x.resource_name, x.error_code) for x in decoded.responses]
    assert got == [("1", 0), ("", 40), ("3", 0)]


def test_topic_throttle_lists_are_topic_settings_and_brokers_go_apart() -> None:
    r = IncrementalAlterConfigsRequest
    res, cfg = r.AlterConfigsResource, r.AlterConfigsResource.AlterableConfig
    request = r(
        resources=[
            res(
                resource_type=BROKER,
                resource_name="2",
                configs=[
                    cfg(name="leader.replication.throttled.rate", config_operation=0, value="9")
                ],
            ),
            res(
                resource_type=TOPIC,
                resource_name="t",
                configs=[
                    cfg(
                        name="leader.replication.throttled.replicas",
                        config_operation=0,
                        value="0:1,0:2",
                    ),
                    cfg(name="segment.ms", config_operation=1, value=None),
                ],
            ),
        ],
        validate_only=False,
    )
    schema, action = forwarded(request, 1)
    assert action.native.topics == [
        TopicConfigChange("t", {"leader.replication.throttled.replicas": "0:1,0:2"}, ["segment.ms"])
    ]
    answer = action.reply(AlterTopicConfigsResponse([TopicResult("t", 0)]))
    decoded = IncrementalAlterConfigsResponse.decode(
        encode_response(3, schema, answer), version=1, header=True, framed=True
    )
    got = [(x.resource_name, x.error_code) for x in decoded.responses]
    assert got == [("2", 42), ("t", 0)]
