"""DescribeCluster: the cluster id, the controller and the brokers, without topics.

Kafka's admin clients ask it for ``describeCluster``. It is answered from a native Metadata
request that names no topic, so it sees the same brokers (their Kafka listeners) and the same
controller as Metadata does. Authorized operations are not computed (Kafka's "unknown").
"""

from __future__ import annotations

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import (
    Answer,
    ClusterView,
    Forward,
    KafkaResponse,
    field_or,
)
from rillet.wire.messages import MetadataRequest, MetadataResponse

UNKNOWN_AUTHORIZED_OPERATIONS = -(2**31)
# v1 asks which endpoints to describe: brokers (1) or controllers (2). A broker describes
# brokers only; Kafka answers UNSUPPORTED_ENDPOINT_TYPE for the controllers' endpoint.
BROKER_ENDPOINTS = 1
UNSUPPORTED_ENDPOINT_TYPE = 115


def translate_describe_cluster(
    schema: ApiSchema, req: shapes.DescribeClusterRequests, view: ClusterView
) -> Forward[MetadataResponse] | Answer:
    if field_or(req, "endpoint_type", BROKER_ENDPOINTS) != BROKER_ENDPOINTS:
        return Answer(_failure(schema, UNSUPPORTED_ENDPOINT_TYPE))

    def reply(resp: MetadataResponse) -> KafkaResponse:
        endpoints = view.kafka_endpoints()
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "error_code": 0,
                "error_message": None,
                "cluster_id": resp.cluster_id,
                "controller_id": resp.controller_id,
                "brokers": [
                    {"broker_id": e.node_id, "host": e.host, "port": e.port, "rack": e.rack}
                    for _, e in sorted(endpoints.items())
                ],
                "cluster_authorized_operations": UNKNOWN_AUTHORIZED_OPERATIONS,
                "endpoint_type": BROKER_ENDPOINTS,
            },
        )

    return Forward(MetadataRequest([]), reply, lambda code: _failure(schema, code))


def _failure(schema: ApiSchema, code: int) -> KafkaResponse:
    return build(
        schema.response_type,
        {
            "error_code": code,
            "error_message": None,
            "cluster_id": "",
            "controller_id": -1,
            "brokers": [],
            "cluster_authorized_operations": UNKNOWN_AUTHORIZED_OPERATIONS,
            "endpoint_type": BROKER_ENDPOINTS,
        },
    )
