"""ListConfigResources (74; v0 was ListClientMetricsResources): which resources have
settings ``kafka-configs --describe`` can show, by type.

rillet has no client-metrics resources (v0 answers an empty list). From v1: topics (as
Metadata lists them, so ACLs filter them the same way), brokers (the live brokers' ids) and
groups (as ListGroups lists them); no types means all of them. Topics and groups come from
two internal requests, so a request naming both types is answered with the topics and
brokers only (Kafka's tools ask for one type at a time).
"""

from __future__ import annotations

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Answer, ClusterView, Forward, KafkaResponse, field_or
from rillet.wire import classic_group_messages as cgm
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import MetadataRequest, MetadataResponse

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
LISTED = frozenset({TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP})


def translate_list_config_resources(
    schema: ApiSchema, req: shapes.ListConfigResourcesRequests, view: ClusterView
) -> Forward[MetadataResponse] | Forward[cgm.ClassicListGroupsResponse] | Answer:
    no_types: tuple[int, ...] = ()  # (v0 lists client metrics resources only)
    types = {int(t) for t in field_or(req, "resource_types", no_types)} or set(LISTED)
    if schema.version == 0:
        types = {CLIENT_METRICS}

    def respond(code: int, resources: list[tuple[str, int]]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "error_code": code,
                "config_resources": [
                    {"resource_name": name, "resource_type": kind} for name, kind in resources
                ],
            },
        )

    unknown = sorted(types - LISTED)
    if unknown:
        return Answer(respond(ErrorCode.INVALID_REQUEST, []))
    brokers = [
        (str(node_id), kind)
        for kind in (BROKER, BROKER_LOGGER)
        if kind in types
        for node_id in sorted(view.kafka_endpoints())
    ]

    def fail(code: int) -> KafkaResponse:
        return respond(code, [])

    if TOPIC in types:

        def topics(resp: MetadataResponse) -> KafkaResponse:
            listed = sorted(t.name for t in resp.topics if t.error_code == ErrorCode.NONE)
            return respond(ErrorCode.NONE, [(name, TOPIC) for name in listed] + brokers)

        return Forward(MetadataRequest(None, -1, False), topics, fail)
    if GROUP in types:

        def groups(resp: cgm.ClassicListGroupsResponse) -> KafkaResponse:
            listed = sorted(g.group_id for g in resp.groups)
            return respond(resp.error_code, brokers + [(name, GROUP) for name in listed])

        return Forward(cgm.ClassicListGroupsRequest(), groups, fail)
    return Answer(respond(ErrorCode.NONE, brokers))
