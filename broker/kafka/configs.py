"""DescribeConfigs for topics, this broker and groups, with Kafka's types and sources.

Topics: the internal Metadata request names each topic's overrides; the node's defaults (its
``[log]`` and ``[replication]`` settings, through the cluster view) fill in the rest, marked
as defaults. A broker resource naming this node is answered from the node's own settings
(node_configs), one naming another node is refused (Kafka's admin client sends each broker
its own); a group resource gets the group settings the node gives every group. Other
resource types are refused.
"""

from __future__ import annotations

from typing import TypeAlias

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.config_entries import topic_entry
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.error_map import kafka_message
from rillet.broker.kafka.node_configs import broker_entries, group_entries
from rillet.broker.kafka.translation import Answer, ClusterView, Forward, KafkaResponse, field_or
from rillet.wire.error_codes import ErrorCode
from rillet.wire.log_dir_messages import DescribeLogDirsRequest, DescribeLogDirsResponse
from rillet.wire.messages import MetadataRequest, MetadataResponse

TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
GROUP_RESOURCE = 32


def translate_describe_configs(
    schema: ApiSchema, req: shapes.DescribeConfigsRequests, view: ClusterView
) -> Forward[MetadataResponse] | Forward[DescribeLogDirsResponse] | Answer:
    resources = [
        (
            int(r.resource_type),
            str(r.resource_name),
            None if r.configuration_keys is None else set(r.configuration_keys),
        )
        for r in req.resources
    ]
    topics = [name for kind, name, _ in resources if kind == TOPIC_RESOURCE]
    brokers = any(kind == BROKER_RESOURCE for kind, _, _ in resources)
    synonyms = field_or(req, "include_synonyms", False)

    def result(
        kind: int, name: str, keys: set[str] | None, overrides: Overrides, refusal: Refusal
    ) -> shapes.DescribeConfigsResultShape:
        if kind == BROKER_RESOURCE:
            if refusal is not None:
                return _result(kind, name, refusal[0], refusal[1], [])
            return _broker_result(view, name, keys, synonyms)
        if kind == GROUP_RESOURCE:
            entries = group_entries(view.node_config(), synonyms)
            return _result(kind, name, ErrorCode.NONE, None, _only(entries, keys))
        if kind != TOPIC_RESOURCE:
            message = "only topics, brokers and groups"
            return _result(kind, name, ErrorCode.INVALID_REQUEST, message, [])
        if isinstance(overrides, int):
            return _result(kind, name, overrides, None, [])
        defaults = view.topic_config_defaults()
        entries = [
            topic_entry(
                key, overrides.get(key), defaults.get(key, overrides.get(key, "")), synonyms
            )
            for key in sorted({**defaults, **overrides})
            if keys is None or key in keys
        ]
        return _result(kind, name, ErrorCode.NONE, None, entries)

    def respond(found: dict[str, Overrides], refusal: Refusal = None) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "results": [
                    result(
                        kind,
                        name,
                        keys,
                        found.get(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
                        refusal,
                    )
                    for kind, name, keys in resources
                ]
            },
        )

    if not topics and not brokers:
        return Answer(respond({}))
    if not topics:  # the node's settings, once the cluster gate lets the caller through
        return Forward(
            CLUSTER_DESCRIBE_GATE, lambda _: respond({}), lambda code: respond({}, (code, None))
        )
    beside_topics: Refusal = (ErrorCode.INVALID_REQUEST, "describe a broker in its own request")

    def reply(resp: MetadataResponse) -> KafkaResponse:
        return respond(
            {
                t.name: (t.configs if t.error_code == ErrorCode.NONE else t.error_code)
                for t in resp.topics
            },
            beside_topics,
        )

    def fail(code: int) -> KafkaResponse:
        return respond(dict.fromkeys(topics, code), beside_topics)

    return Forward(MetadataRequest(topics), reply, fail)


def _result(
    kind: int, name: str, code: int, message: str | None, configs: list[Entry]
) -> shapes.DescribeConfigsResultShape:
    return {
        "error_code": code,
        "error_message": kafka_message(code, message),
        "resource_type": kind,
        "resource_name": name,
        "configs": configs,
    }


# A node's settings are shown to who may DESCRIBE the cluster (Kafka: DESCRIBE_CONFIGS on
# it): the cheapest native request needing exactly that (it asks for no partition) goes
# through the dispatcher's authorization first; its answer itself is not used.
CLUSTER_DESCRIBE_GATE = DescribeLogDirsRequest([])
# An error code and message a broker resource gets instead of the node's settings.
Refusal = tuple[int, str | None] | None
# A topic's overrides, or the error the node answered for it.
Overrides = dict[str, str] | int
Entry: TypeAlias = "shapes.DescribeConfigsResourceResultShape"


def _only(entries: list[Entry], keys: set[str] | None) -> list[Entry]:
    return entries if keys is None else [e for e in entries if e.get("name") in keys]


def _broker_result(
    view: ClusterView, name: str, keys: set[str] | None, synonyms: bool
) -> shapes.DescribeConfigsResultShape:
    """This node's settings; none for "" (the cluster-wide dynamic defaults: there are none
    here); another node's id is refused, its settings being in its own file."""
    config = view.node_config()
    if name == "":
        return _result(BROKER_RESOURCE, name, ErrorCode.NONE, None, [])
    if name != str(config.node_id):
        message = f"this is node {config.node_id}: ask node {name} for its own settings"
        return _result(BROKER_RESOURCE, name, ErrorCode.INVALID_REQUEST, message, [])
    advertised = view.kafka_endpoints().get(config.node_id)
    entries = broker_entries(config, advertised, synonyms)
    return _result(BROKER_RESOURCE, name, ErrorCode.NONE, None, _only(entries, keys))
