"""IncrementalAlterConfigs and AlterConfigs: Kafka's config changes, for topics.

Both map onto the native topic-config change (handlers/topic_config_changes.py), one entry per
topic resource: IncrementalAlterConfigs' SET and DELETE operations become ``set`` and
``delete``; AlterConfigs replaces a topic's overrides with the given map. APPEND and SUBTRACT
apply to list-valued settings, which no rillet topic setting is: INVALID_CONFIG, as Kafka
answers for a non-list key. Broker resources are refused with INVALID_REQUEST (a node's
settings live in its node.toml and change with a restart); other resource types likewise.
"""

from __future__ import annotations

from typing import Any

from rillet.broker.kafka.api_table import ALTER_CONFIGS, ApiSchema
from rillet.broker.kafka.configs import BROKER_RESOURCE, TOPIC_RESOURCE
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.error_map import kafka_message
from rillet.broker.kafka.translation import Answer, Forward
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    AlterTopicConfigsRequest,
    AlterTopicConfigsResponse,
    TopicConfigChange,
)

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def translate_config_changes(schema: ApiSchema, req: Any) -> Forward | Answer:
    incremental = schema.api_key != ALTER_CONFIGS
    keys = [(int(r.resource_type), str(r.resource_name)) for r in req.resources]
    local: dict[tuple[int, str], tuple[int, str | None]] = {}
    changes: list[TopicConfigChange] = []
    for r in req.resources:
        key = (int(r.resource_type), str(r.resource_name))
        refusal = _refusal(key[0]) or (_bad_operation(r.configs) if incremental else None)
        if refusal is not None:
            local[key] = refusal
        elif incremental:
            changes.append(
                TopicConfigChange(
                    key[1],
                    {str(c.name): str(c.value) for c in r.configs if c.config_operation == SET},
                    [str(c.name) for c in r.configs if c.config_operation == DELETE],
                )
            )
        else:
            given = {str(c.name): str(c.value) for c in r.configs if c.value is not None}
            changes.append(TopicConfigChange(key[1], given, [], replace=True))

    def respond(results: dict[tuple[int, str], tuple[int, str | None]]) -> Any:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "responses": [
                    {
                        "error_code": results[k][0],
                        "error_message": results[k][1],
                        "resource_type": k[0],
                        "resource_name": k[1],
                    }
                    for k in dict.fromkeys(keys)
                ],
            },
        )

    if not changes:
        return Answer(respond(local))
    native = AlterTopicConfigsRequest(changes, validate_only=bool(req.validate_only))

    def reply(resp: AlterTopicConfigsResponse) -> Any:
        results = dict(local)
        results.update(
            {
                (TOPIC_RESOURCE, r.name): (
                    r.error_code,
                    kafka_message(r.error_code, r.error_message),
                )
                for r in resp.topics
            }
        )
        return respond(results)

    def fail(code: int) -> Any:
        return respond({k: local.get(k, (code, kafka_message(code, None))) for k in keys})

    return Forward(native, reply, fail)


def _refusal(resource_type: int) -> tuple[int, str] | None:
    if resource_type == TOPIC_RESOURCE:
        return None
    if resource_type == BROKER_RESOURCE:
        why = "broker settings live in each node's node.toml and change with a restart"
    else:
        why = f"resource type {resource_type} has no settings here"
    return int(ErrorCode.INVALID_REQUEST), why


def _bad_operation(configs: Any) -> tuple[int, str] | None:
    for c in configs:
        op = int(c.config_operation)
        if op in (APPEND, SUBTRACT):
            return int(ErrorCode.INVALID_CONFIG), f"{c.name} is not a list: no APPEND or SUBTRACT"
        if op not in (SET, DELETE):
            return int(ErrorCode.INVALID_REQUEST), f"unknown config operation {op}"
    return None
