"""IncrementalAlterConfigs and AlterConfigs: Kafka's config changes, for topics.

Both map onto the native topic-config change (handlers/topic_config_changes.py), one entry per
topic resource: IncrementalAlterConfigs' SET and DELETE operations become ``set`` and
``delete``, APPEND and SUBTRACT become ``append`` and ``subtract`` (the controller edits the
current value); AlterConfigs replaces a topic's overrides with the given map. APPEND and
SUBTRACT apply to list-valued settings (``cleanup.policy``); on any other key they are
INVALID_CONFIG, as Kafka answers. Broker resources are refused with INVALID_REQUEST (a node's
settings live in its node.toml and change with a restart); other resource types likewise.

Replication throttles (Kafka's ``leader.replication.throttled.rate`` and
``follower.replication.throttled.rate`` on brokers, ``*.replication.throttled.replicas`` on
topics) are not built: setting one is refused, but removing one succeeds and changes
nothing, so ``kafka-reassign-partitions --verify``, which clears them all, works unchanged.
"""

from __future__ import annotations

from typing import Any

from rillet.broker.kafka.api_table import ALTER_CONFIGS, ApiSchema
from rillet.broker.kafka.configs import BROKER_RESOURCE, TOPIC_RESOURCE
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.error_map import kafka_message
from rillet.broker.kafka.translation import Answer, Forward
from rillet.broker.topic_config import LIST_TOPIC_CONFIGS
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    AlterTopicConfigsRequest,
    AlterTopicConfigsResponse,
    TopicConfigChange,
)

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
BROKER_THROTTLES = frozenset(
    {
        "leader.replication.throttled.rate",
        "follower.replication.throttled.rate",
        "replica.alter.log.dirs.io.max.bytes.per.second",
    }
)
TOPIC_THROTTLES = frozenset(
    {"leader.replication.throttled.replicas", "follower.replication.throttled.replicas"}
)
NO_THROTTLES = "replication throttles are not supported yet (docs/reassignment.md)"


def translate_config_changes(schema: ApiSchema, req: Any) -> Forward | Answer:
    incremental = schema.api_key != ALTER_CONFIGS
    keys = [(int(r.resource_type), str(r.resource_name)) for r in req.resources]
    local: dict[tuple[int, str], tuple[int, str | None]] = {}
    changes: list[TopicConfigChange] = []
    for r in req.resources:
        key = (int(r.resource_type), str(r.resource_name))
        throttles = _throttle_answer(key[0], r.configs) if incremental else None
        refusal = _refusal(key[0]) or (_bad_operation(r.configs) if incremental else None)
        if throttles is not None:
            local[key] = throttles
        elif refusal is not None:
            local[key] = refusal
        elif incremental:
            changes.append(
                TopicConfigChange(
                    key[1],
                    {str(c.name): str(c.value) for c in r.configs if c.config_operation == SET},
                    [
                        str(c.name)
                        for c in r.configs
                        if c.config_operation == DELETE and str(c.name) not in TOPIC_THROTTLES
                    ],
                    append={
                        str(c.name): str(c.value or "")
                        for c in r.configs
                        if c.config_operation == APPEND
                    },
                    subtract={
                        str(c.name): str(c.value or "")
                        for c in r.configs
                        if c.config_operation == SUBTRACT
                    },
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


def _throttle_answer(resource_type: int, configs: Any) -> tuple[int, str | None] | None:
    """The answer for a change that names replication throttles (None: it names none, or
    also other topic settings, which go on to the topic change)."""
    throttles = BROKER_THROTTLES if resource_type == BROKER_RESOURCE else TOPIC_THROTTLES
    named = [c for c in configs if str(c.name) in throttles]
    if not named or resource_type not in (BROKER_RESOURCE, TOPIC_RESOURCE):
        return None
    if any(int(c.config_operation) != DELETE for c in named):
        return int(ErrorCode.INVALID_CONFIG), NO_THROTTLES
    if len(named) == len(configs):
        return int(ErrorCode.NONE), None  # removing what was never set: done
    return None  # with other settings: a topic's go on, a broker's are refused


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
        if op in (APPEND, SUBTRACT) and str(c.name) not in LIST_TOPIC_CONFIGS:
            return int(ErrorCode.INVALID_CONFIG), f"{c.name} is not a list: no APPEND or SUBTRACT"
        if op not in (SET, DELETE, APPEND, SUBTRACT):
            return int(ErrorCode.INVALID_REQUEST), f"unknown config operation {op}"
    return None
