"""DescribeConfigs through the Kafka codec, against kafka-python's classes."""

from __future__ import annotations

import pytest
from kafka.protocol.admin.configs import DescribeConfigsRequest, DescribeConfigsResponse
from kafka_front_end import TOPIC_DEFAULTS, forwarded

from rillet.broker.kafka.codec import encode_response
from rillet.wire import messages as m
from rillet.wire.error_codes import ErrorCode
from rillet.wire.log_dir_messages import DescribeLogDirsRequest, DescribeLogDirsResponse

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
        assert (broker.error_code, list(broker.configs)) == (ErrorCode.INVALID_REQUEST, [])
        assert broker.error_message == "describe a broker in its own request"


def test_a_brokers_settings_need_describe_on_the_cluster() -> None:
    """The node's settings are shown once the dispatcher's authorization lets the caller
    DESCRIBE the cluster (the gate request asks for nothing else); other resource types are
    answered beside them."""
    request = R(
        resources=[
            R.DescribeConfigsResource(resource_type=4, resource_name="1", configuration_keys=None),
            R.DescribeConfigsResource(resource_type=8, resource_name="x", configuration_keys=None),
        ],
        include_synonyms=False,
    )
    schema, action = forwarded(request, 2)
    assert action.native == DescribeLogDirsRequest([])
    allowed = action.reply(DescribeLogDirsResponse(0, "/d", 1, 1, []))
    data = encode_response(3, schema, allowed)
    decoded = DescribeConfigsResponse.decode(data, version=2, header=True, framed=True)
    assert [r.error_code for r in decoded.results] == [0, 42]
    assert "log.dirs" in {c.name for c in decoded.results[0].configs}
    refused = action.fail(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    data = encode_response(3, schema, refused)
    decoded = DescribeConfigsResponse.decode(data, version=2, header=True, framed=True)
    assert [r.error_code for r in decoded.results] == [31, 42]
    assert list(decoded.results[0].configs) == []
