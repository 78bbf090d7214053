"""DescribeConfigs through the Kafka codec, against kafka-python's classes."""

from __future__ import annotations

import pytest
from kafka.protocol.admin.configs import DescribeConfigsRequest, DescribeConfigsResponse
from kafka_front_end import TOPIC_DEFAULTS, StaticView, forwarded, received

from rillet.broker.kafka.codec import encode_response
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import Answer
from rillet.wire import messages as m
from rillet.wire.error_codes import ErrorCode

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

R = DescribeConfigsRequest


def test_topic_settings_are_the_overrides_over_the_node_defaults() -> None:
    for version in range(1, 4):
        request = R(
            resources=[
                R.DescribeConfigsResource(
                    resource_type=2, resource_name="t", configuration_keys=None
                ),
                R.DescribeConfigsResource(
                    resource_type=2, resource_name="gone", configuration_keys=["retention.ms"]
                ),
                R.DescribeConfigsResource(
                    resource_type=4, resource_name="1", configuration_keys=None
                ),
            ],
            include_synonyms=False,
        )
        schema, action = forwarded(request, version)
        assert action.native == m.MetadataRequest(["t", "gone"])
        native = m.MetadataResponse(
            "c",
            1,
            [],
            [
                m.TopicMetadata("t", 0, [], {"retention.ms": "5000"}),
                m.TopicMetadata("gone", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []),
            ],
        )
        data = encode_response(3, schema, action.reply(native))
        decoded = DescribeConfigsResponse.decode(data, version=version, header=True, framed=True)
        topic, gone, broker = decoded.results
        got = {c.name: (c.value, c.config_source) for c in topic.configs}
        assert got == {"retention.ms": ("5000", 1), "min.insync.replicas": ("1", 5)}
        assert set(got) == set(TOPIC_DEFAULTS)
        assert (gone.error_code, list(gone.configs)) == (3, [])
        assert (broker.error_code, broker.resource_name) == (0, "1")
        assert {c.name for c in broker.configs} >= {"advertised.listeners", "log.dirs"}


def test_only_brokers_is_answered_without_the_dispatcher() -> None:
    request = R(
        resources=[
            R.DescribeConfigsResource(resource_type=4, resource_name="1", configuration_keys=None),
            R.DescribeConfigsResource(resource_type=8, resource_name="x", configuration_keys=None),
        ],
        include_synonyms=False,
    )
    _header, schema, entity = received(request, 2)
    action = translate(schema, entity, StaticView())
    assert isinstance(action, Answer)
    data = encode_response(3, schema, action.response)
    decoded = DescribeConfigsResponse.decode(data, version=2, header=True, framed=True)
    assert [r.error_code for r in decoded.results] == [0, 42]
