"""IncrementalAlterConfigs and AlterConfigs: Kafka's config changes, for topics and brokers.

Topic resources map onto the native topic-config change (handlers/topic_config_changes.py),
one entry per topic resource: IncrementalAlterConfigs' SET and DELETE operations become
``set`` and ``delete``, APPEND and SUBTRACT become ``append`` and ``subtract`` (the
controller edits the current value); AlterConfigs replaces a topic's overrides with the
given map. APPEND and SUBTRACT apply to list-valued settings (``cleanup.policy``); on any
other key they are INVALID_CONFIG, as Kafka answers. The topics' replication throttle lists
(``*.replication.throttled.replicas``) are topic settings like the others.

Broker resources (name "N" for broker N, "" for the cluster-wide default) carry the only
dynamic broker settings, Kafka's replication throttle rates, to the native broker-config
change (handlers/broker_admin.py). A broker resource naming any other setting is refused
with INVALID_REQUEST (a node's settings live in its node.toml and change with a restart);
removing ``replica.alter.log.dirs.io.max.bytes.per.second`` succeeds and changes nothing
(one log directory per node), so ``kafka-reassign-partitions --verify``, which clears it,
works unchanged. One request changes brokers or topics, not both (Kafka's tools send them
apart); other resource types are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ALTER_CONFIGS, ApiSchema
from rillet.broker.kafka.configs import BROKER_RESOURCE, TOPIC_RESOURCE
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.error_map import kafka_message
from rillet.broker.kafka.translation import Answer, Forward, KafkaResponse, field_or
from rillet.broker.replica.replication.replication_throttle import BROKER_THROTTLE_CONFIGS
from rillet.broker.replica.topic_config import LIST_TOPIC_CONFIGS
from rillet.wire.broker_admin_messages import (
    AlterBrokerConfigsRequest,
    AlterBrokerConfigsResponse,
    BrokerConfigChange,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    AlterTopicConfigsRequest,
    AlterTopicConfigsResponse,
    TopicConfigChange,
)

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
NO_LOG_DIR_THROTTLE = "replica.alter.log.dirs.io.max.bytes.per.second"
Key = tuple[int, str]
Result = tuple[int, str | None]


class _Config(Protocol):
    """A setting to change: AlterConfigs gives a value, IncrementalAlterConfigs an
    operation too (read with :func:`_operation`)."""

    @property
    def name(self) -> str: ...

    @property
    def value(self) -> str | None: ...


def _operation(config: _Config) -> int:
    """IncrementalAlterConfigs' operation on a setting (AlterConfigs only sets)."""
    return field_or(config, "config_operation", SET)


def translate_config_changes(
    schema: ApiSchema, req: shapes.AlterConfigsRequests | shapes.IncrementalAlterConfigsRequests
) -> Forward[AlterTopicConfigsResponse] | Forward[AlterBrokerConfigsResponse] | Answer:
    incremental = schema.api_key != ALTER_CONFIGS
    keys = [(int(r.resource_type), str(r.resource_name)) for r in req.resources]
    local: dict[Key, Result] = {}
    changes: list[TopicConfigChange] = []
    broker_changes: dict[Key, BrokerConfigChange] = {}
    for r in req.resources:
        key = (int(r.resource_type), str(r.resource_name))
        if key[0] == BROKER_RESOURCE:
            outcome = _broker_change(key[1], r.configs, incremental)
            if isinstance(outcome, BrokerConfigChange):
                broker_changes[key] = outcome
            else:
                local[key] = outcome
            continue
        refusal = _refusal(key[0]) or (_bad_operation(r.configs) if incremental else None)
        if refusal is not None:
            local[key] = refusal
        elif incremental:
            changes.append(_topic_change(key[1], r.configs))
        else:
            given = {str(c.name): str(c.value) for c in r.configs if c.value is not None}
            changes.append(TopicConfigChange(key[1], given, [], replace=True))

    def respond(results: dict[Key, Result]) -> KafkaResponse:
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

    def fail(code: int) -> KafkaResponse:
        return respond({k: local.get(k, (code, kafka_message(code, None))) for k in keys})

    if broker_changes and changes:
        apart = "change broker and topic configs in separate requests"
        local.update((k, (int(ErrorCode.INVALID_REQUEST), apart)) for k in broker_changes)
        broker_changes = {}
    if broker_changes:
        return _forward_to_brokers(broker_changes, bool(req.validate_only), local, respond, fail)
    if not changes:
        return Answer(respond(local))
    native = AlterTopicConfigsRequest(changes, validate_only=bool(req.validate_only))

    def reply(resp: AlterTopicConfigsResponse) -> KafkaResponse:
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

    return Forward(native, reply, fail)


def _topic_change(name: str, configs: Sequence[_Config]) -> TopicConfigChange:
    def of(op: int) -> dict[str, str]:
        return {str(c.name): str(c.value or "") for c in configs if _operation(c) == op}

    return TopicConfigChange(
        name,
        {str(c.name): str(c.value) for c in configs if _operation(c) == SET},
        [str(c.name) for c in configs if _operation(c) == DELETE],
        append=of(APPEND),
        subtract=of(SUBTRACT),
    )


def _forward_to_brokers(
    broker_changes: dict[Key, BrokerConfigChange],
    validate_only: bool,
    local: dict[Key, Result],
    respond: Callable[[dict[Key, Result]], KafkaResponse],
    fail: Callable[[int], KafkaResponse],
) -> Forward[AlterBrokerConfigsResponse]:
    native = AlterBrokerConfigsRequest(list(broker_changes.values()), validate_only)
    by_id = {c.broker_id: k for k, c in broker_changes.items()}

    def reply(resp: AlterBrokerConfigsResponse) -> KafkaResponse:
        results = dict(local)
        results.update(
            (by_id[r.broker_id], (r.error_code, kafka_message(r.error_code, r.error_message)))
            for r in resp.results
            if r.broker_id in by_id
        )
        return respond(results)

    return Forward(native, reply, fail)


def _broker_change(
    name: str, configs: Sequence[_Config], incremental: bool
) -> BrokerConfigChange | Result:
    """The native change for one broker resource, or the answer when there is none to make."""
    named = {str(c.name) for c in configs}
    if not named or not named <= {*BROKER_THROTTLE_CONFIGS, NO_LOG_DIR_THROTTLE}:
        return _refusal(BROKER_RESOURCE) or (int(ErrorCode.INVALID_REQUEST), None)
    if name != "" and not name.isdigit():
        return int(ErrorCode.INVALID_REQUEST), f"broker resource name {name!r} is not a node id"
    broker_id = int(name) if name else -1
    if not incremental:
        if NO_LOG_DIR_THROTTLE in named:
            return int(ErrorCode.INVALID_CONFIG), f"{NO_LOG_DIR_THROTTLE}: one log dir per node"
        given = {str(c.name): str(c.value) for c in configs if c.value is not None}
        return BrokerConfigChange(broker_id, given, [], replace=True)
    set_: dict[str, str] = {}
    delete: list[str] = []
    for c in configs:
        op, key = _operation(c), str(c.name)
        if op == DELETE:
            if key != NO_LOG_DIR_THROTTLE:
                delete.append(key)
        elif op == SET and key != NO_LOG_DIR_THROTTLE:
            set_[key] = str(c.value)
        else:
            return int(ErrorCode.INVALID_CONFIG), f"{key}: only SET and DELETE apply"
    if not set_ and not delete:
        return int(ErrorCode.NONE), None  # removing what never exists here: done
    return BrokerConfigChange(broker_id, set_, delete)


def _refusal(resource_type: int) -> Result | None:
    if resource_type == TOPIC_RESOURCE:
        return None
    if resource_type == BROKER_RESOURCE:
        why = "broker settings live in each node's node.toml and change with a restart"
    else:
        why = f"resource type {resource_type} has no settings here"
    return int(ErrorCode.INVALID_REQUEST), why


def _bad_operation(configs: Sequence[_Config]) -> Result | None:
    for c in configs:
        op = _operation(c)
        if op in (APPEND, SUBTRACT) and str(c.name) not in LIST_TOPIC_CONFIGS:
            return int(ErrorCode.INVALID_CONFIG), f"{c.name} is not a list: no APPEND or SUBTRACT"
        if op not in (SET, DELETE, APPEND, SUBTRACT):
            return int(ErrorCode.INVALID_REQUEST), f"unknown config operation {op}"
    return None
