"""DescribeConfigs as kafka-configs --describe --all reads it: Kafka's config types, sources
and synonyms for topics, this broker's own settings under Kafka's names, and group settings
(decoded by kafka-python)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kafka.protocol.admin.configs import DescribeConfigsRequest, DescribeConfigsResponse
from kafka_front_end import StaticView, forwarded, received

from rillet.broker.config import NodeConfig, TopicDefaults
from rillet.broker.kafka.codec import encode_response
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import Answer, KafkaEndpoint
from rillet.wire import messages as m
from rillet.wire.error_codes import ErrorCode
from rillet.wire.log_dir_messages import DescribeLogDirsResponse

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

R = DescribeConfigsRequest
BOOLEAN, STRING, INT, LONG, LIST = 1, 2, 3, 5, 7
TOPIC_OVERRIDE, FILE, DEFAULT = 1, 4, 5


def _request(*resources: tuple[int, str]) -> Any:
    return R(
        resources=[
            R.DescribeConfigsResource(resource_type=k, resource_name=n, configuration_keys=None)
            for k, n in resources
        ],
        include_synonyms=True,
    )


def _answered(view: StaticView, *resources: tuple[int, str]) -> Any:
    """The answer to a request without topics: a group's at once, a broker's once the
    cluster gate (which the dispatcher authorizes) has been passed."""
    _header, schema, entity = received(_request(*resources), 3)
    action = translate(schema, entity, view)
    if isinstance(action, Answer):
        response = action.response
    else:
        response = action.reply(DescribeLogDirsResponse(0, "/d", 1, 1, []))
    data = encode_response(3, schema, response)
    return DescribeConfigsResponse.decode(data, version=3, header=True, framed=True).results


def _synonyms(config: Any) -> list[tuple[str, str | None, int]]:
    return [(s.name, s.value, s.source) for s in config.synonyms]


def test_topic_settings_have_kafkas_types_and_their_synonyms() -> None:
    schema, action = forwarded(_request((2, "t")), 3)
    overrides = {
        "retention.ms": "5000",
        "unclean.leader.election.enable": "true",
        "message.timestamp.type": "LogAppendTime",
        "cleanup.policy": "delete",
    }
    native = m.MetadataResponse("c", 1, [], [m.TopicMetadata("t", 0, [], overrides)])
    data = encode_response(3, schema, action.reply(native))
    [topic] = DescribeConfigsResponse.decode(data, version=3, header=True, framed=True).results
    got = {c.name: c for c in topic.configs}
    assert {name: c.config_type for name, c in got.items()} == {
        "retention.ms": LONG,
        "min.insync.replicas": INT,
        "unclean.leader.election.enable": BOOLEAN,
        "message.timestamp.type": STRING,
        "cleanup.policy": LIST,
    }
    assert _synonyms(got["retention.ms"]) == [
        ("retention.ms", "5000", TOPIC_OVERRIDE),
        ("log.retention.ms", "604800000", DEFAULT),
    ]
    assert got["min.insync.replicas"].config_source == DEFAULT
    assert _synonyms(got["min.insync.replicas"]) == [("min.insync.replicas", "1", DEFAULT)]


def test_this_broker_is_described_from_its_own_settings(tmp_path: Path) -> None:
    config = NodeConfig(node_id=1, data_dir=tmp_path, topics=TopicDefaults(num_partitions=3))
    view = StaticView({1: KafkaEndpoint(1, "h1", 19093, None)}, config=config)
    mine, other = _answered(view, (4, "1"), (4, "2"))
    assert mine.error_code == ErrorCode.NONE
    got = {c.name: c for c in mine.configs}
    assert got["advertised.listeners"].value == "PLAINTEXT://h1:19093"  # the bound port
    assert got["listeners"].config_type == LIST
    assert got["log.dirs"].value == str(tmp_path.resolve())
    assert all(c.read_only for c in mine.configs)
    assert (got["num.partitions"].value, got["num.partitions"].config_type) == ("3", INT)
    assert got["num.partitions"].config_source == FILE
    assert _synonyms(got["num.partitions"]) == [
        ("num.partitions", "3", FILE),
        ("num.partitions", "1", DEFAULT),
    ]
    assert (got["log.retention.ms"].config_source, got["log.retention.ms"].config_type) == (
        DEFAULT,
        LONG,
    )
    assert other.error_code == ErrorCode.INVALID_REQUEST
    assert "node 2" in other.error_message


def test_a_group_gets_the_nodes_group_settings() -> None:
    [group] = _answered(StaticView(), (32, "g"))
    assert group.error_code == ErrorCode.NONE
    [heartbeat] = group.configs
    assert (heartbeat.name, heartbeat.value, heartbeat.config_type) == (
        "consumer.heartbeat.interval.ms",
        "300",
        INT,
    )
    assert heartbeat.config_source == DEFAULT
    assert _synonyms(heartbeat) == [("group.consumer.heartbeat.interval.ms", "300", DEFAULT)]
