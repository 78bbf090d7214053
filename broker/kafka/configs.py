"""DescribeConfigs for topics: every topic setting rillet has, with its effective value.

The internal Metadata request names each topic's overrides; the node's defaults (its
``[log]`` and ``[replication]`` settings, through the cluster view) fill in the rest, marked
as defaults. A broker resource is answered with no settings (node settings live in the
node's TOML file, not in the cluster); other resource types are refused.
"""

from __future__ import annotations

from typing import Any

from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Answer, ClusterView, Forward
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import MetadataRequest, MetadataResponse

TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
# Kafka's config sources
DYNAMIC_TOPIC_CONFIG = 1
DEFAULT_CONFIG = 5


def translate_describe_configs(schema: ApiSchema, req: Any, view: ClusterView) -> Forward | Answer:
    resources = [
        (
            int(r.resource_type),
            str(r.resource_name),
            None if r.configuration_keys is None else set(r.configuration_keys),
        )
        for r in req.resources
    ]
    topics = [name for kind, name, _ in resources if kind == TOPIC_RESOURCE]

    def result(kind: int, name: str, keys: set[str] | None, overrides: Any) -> dict[str, Any]:
        if kind == BROKER_RESOURCE:
            return _result(kind, name, ErrorCode.NONE, None, [])
        if kind != TOPIC_RESOURCE:
            return _result(kind, name, ErrorCode.INVALID_REQUEST, "only topics and brokers", [])
        if isinstance(overrides, int):
            return _result(kind, name, overrides, None, [])
        defaults = view.topic_config_defaults()
        entries = [
            _entry(key, overrides.get(key, default), key in overrides)
            for key, default in sorted({**defaults, **overrides}.items())
            if keys is None or key in keys
        ]
        return _result(kind, name, ErrorCode.NONE, None, entries)

    def respond(found: dict[str, Any]) -> Any:
        return build(
            schema.response_type,
            {
                "results": [
                    result(kind, name, keys, found.get(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                    for kind, name, keys in resources
                ]
            },
        )

    if not topics:
        return Answer(respond({}))

    def reply(resp: MetadataResponse) -> Any:
        return respond(
            {
                t.name: (t.configs if t.error_code == ErrorCode.NONE else t.error_code)
                for t in resp.topics
            }
        )

    def fail(code: int) -> Any:
        return respond(dict.fromkeys(topics, code))

    return Forward(MetadataRequest(topics), reply, fail)


def _result(
    kind: int, name: str, code: int, message: str | None, configs: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "error_code": code,
        "error_message": message,
        "resource_type": kind,
        "resource_name": name,
        "configs": configs,
    }


def _entry(key: str, value: str, overridden: bool) -> dict[str, Any]:
    return {
        "name": key,
        "value": value,
        "read_only": False,
        "config_source": DYNAMIC_TOPIC_CONFIG if overridden else DEFAULT_CONFIG,
        "is_sensitive": False,
        "synonyms": [],
        "config_type": 0,  # UNKNOWN
        "documentation": None,
    }
