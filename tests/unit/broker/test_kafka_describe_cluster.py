"""DescribeCluster v0 (a flexible-only api) against kafka-python's classes."""

from __future__ import annotations

import pytest
from kafka.protocol.admin.cluster import DescribeClusterRequest, DescribeClusterResponse
from kafka_front_end import StaticView, forwarded

from rillet.broker.kafka.codec import encode_response
from rillet.broker.kafka.translation import KafkaEndpoint
from rillet.wire.messages import MetadataRequest, MetadataResponse

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.mark.parametrize("version", [0, 1])
def test_describe_cluster_names_the_kafka_listeners_and_the_controller(version: int) -> None:
    view = StaticView(
        {
            2: KafkaEndpoint(2, "h2", 9093, "rack-b"),
            1: KafkaEndpoint(1, "h1", 9092, None),
        }
    )
    schema, action = forwarded(DescribeClusterRequest(), version, view)
    assert schema.flexible
    assert action.native == MetadataRequest([])  # brokers and controller, no topics
    answer = action.reply(MetadataResponse("cid", 2, [], []))
    decoded = DescribeClusterResponse.decode(
        encode_response(9, schema, answer), version=version, header=True, framed=True
    )
    assert decoded._header.correlation_id == 9
    assert (decoded.error_code, decoded.cluster_id, decoded.controller_id) == (0, "cid", 2)
    assert [(b.broker_id, b.host, b.port, b.rack) for b in decoded.brokers] == [
        (1, "h1", 9092, None),
        (2, "h2", 9093, "rack-b"),
    ]
    failed = DescribeClusterResponse.decode(
        encode_response(9, schema, action.fail(15)), version=version, header=True, framed=True
    )
    assert (failed.error_code, failed.brokers) == (15, [])


def test_controller_endpoints_are_not_described_by_a_broker() -> None:
    from kafka_front_end import received

    from rillet.broker.kafka.front_end import translate
    from rillet.broker.kafka.translation import Answer

    _header, schema, entity = received(DescribeClusterRequest(endpoint_type=2), 1)
    action = translate(schema, entity, StaticView())
    assert isinstance(action, Answer)
    decoded = DescribeClusterResponse.decode(
        encode_response(7, schema, action.response), version=1, header=True, framed=True
    )
    assert decoded.error_code == 115  # UNSUPPORTED_ENDPOINT_TYPE
