"""A node's own settings under Kafka's broker setting names, for DescribeConfigs on a broker
resource (``kafka-configs --entity-type brokers --describe --all``) and on a group resource
(``--entity-type groups``: what a group gets from the node).

Node settings come from the node's TOML file at start-up and change only with a restart,
so every broker setting is read-only; its source is the node's file when its value differs
from rillet's default, else the default. Only what the node really has is listed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rillet.broker.config import NodeConfig
from rillet.broker.kafka.config_entries import (
    BOOLEAN,
    DEFAULT_CONFIG,
    INT,
    LIST,
    LONG,
    STATIC_BROKER_CONFIG,
    STRING,
    Synonym,
    entry,
)
from rillet.broker.kafka.translation import KafkaEndpoint


def _listener(c: NodeConfig, host: str, port: int) -> str:
    security = "SASL_PLAINTEXT" if c.kafka_listener.sasl_mechanisms else "PLAINTEXT"
    if c.tls.enabled:
        security = "SASL_SSL" if c.kafka_listener.sasl_mechanisms else "SSL"
    return f"{security}://{host}:{port}"


def _bool(value: bool) -> str:
    return "true" if value else "false"


# Kafka's broker setting name -> (Kafka's type, its value on a node)
BROKER_SETTINGS: dict[str, tuple[int, Callable[[NodeConfig], str | None]]] = {
    "node.id": (INT, lambda c: str(c.node_id)),
    "broker.id": (INT, lambda c: str(c.node_id)),
    "broker.rack": (STRING, lambda c: c.rack),
    "listeners": (
        LIST,
        lambda c: _listener(c, c.kafka_listener.host, c.kafka_listener.port),
    ),
    "log.dirs": (STRING, lambda c: str(c.data_dir.resolve())),
    "num.partitions": (INT, lambda c: str(c.topics.num_partitions)),
    "default.replication.factor": (INT, lambda c: str(c.topics.replication_factor)),
    "auto.create.topics.enable": (BOOLEAN, lambda c: _bool(c.topics.auto_create_topics)),
    "min.insync.replicas": (INT, lambda c: str(c.replication.default_min_insync_replicas)),
    "unclean.leader.election.enable": (BOOLEAN, lambda c: "false"),
    "log.cleanup.policy": (LIST, lambda c: "delete"),
    "log.segment.bytes": (INT, lambda c: str(c.log.segment_bytes)),
    "log.roll.ms": (LONG, lambda c: str(c.log.segment_ms)),
    "log.retention.ms": (LONG, lambda c: str(c.log.retention_ms)),
    "log.retention.bytes": (LONG, lambda c: str(c.log.retention_bytes)),
    "log.index.interval.bytes": (INT, lambda c: str(c.log.index_interval_bytes)),
    "message.max.bytes": (INT, lambda c: str(c.log.max_batch_bytes)),
    "log.flush.interval.messages": (LONG, lambda c: str(c.log.flush_messages)),
    "log.flush.interval.ms": (LONG, lambda c: str(c.log.flush_ms)),
    "log.segment.delete.delay.ms": (LONG, lambda c: str(c.log.file_delete_delay_ms)),
    "log.message.timestamp.type": (STRING, lambda c: c.log.message_timestamp_type),
    "log.message.timestamp.before.max.ms": (
        LONG,
        lambda c: str(c.log.message_timestamp_before_max_ms),
    ),
    "log.message.timestamp.after.max.ms": (
        LONG,
        lambda c: str(c.log.message_timestamp_after_max_ms),
    ),
    "log.retention.check.interval.ms": (LONG, lambda c: str(c.tasks.retention_check_interval_ms)),
    "socket.request.max.bytes": (INT, lambda c: str(c.limits.max_frame_bytes)),
    "queued.max.request.bytes": (LONG, lambda c: str(c.limits.queued_max_request_bytes)),
    "max.connections": (INT, lambda c: str(c.limits.max_connections)),
    "max.connections.per.ip": (INT, lambda c: str(c.limits.max_connections_per_ip)),
    "connections.max.idle.ms": (LONG, lambda c: str(c.limits.connections_max_idle_ms)),
    "replica.lag.time.max.ms": (LONG, lambda c: str(c.replication.replica_lag_time_max_ms)),
    "replica.fetch.wait.max.ms": (INT, lambda c: str(c.replication.fetch_wait_max_ms)),
    "replica.fetch.max.bytes": (INT, lambda c: str(c.replication.fetch_partition_max_bytes)),
    "replica.fetch.response.max.bytes": (
        INT,
        lambda c: str(c.replication.fetch_response_max_bytes),
    ),
    "replica.fetch.backoff.ms": (INT, lambda c: str(c.replication.fetch_backoff_ms)),
    "replica.high.watermark.checkpoint.interval.ms": (
        LONG,
        lambda c: str(c.replication.high_watermark_checkpoint_interval_ms),
    ),
    "group.initial.rebalance.delay.ms": (INT, lambda c: str(c.groups.initial_rebalance_delay_ms)),
    "group.min.session.timeout.ms": (INT, lambda c: str(c.groups.min_session_timeout_ms)),
    "group.max.session.timeout.ms": (INT, lambda c: str(c.groups.max_session_timeout_ms)),
    "group.max.size": (INT, lambda c: str(c.groups.max_size)),
    "group.consumer.heartbeat.interval.ms": (INT, lambda c: str(c.groups.heartbeat_interval_ms)),
}
# A group's settings and the broker setting each takes its value from.
GROUP_SETTINGS: dict[str, str] = {
    "consumer.heartbeat.interval.ms": "group.consumer.heartbeat.interval.ms",
}


def broker_entries(
    config: NodeConfig, advertised: KafkaEndpoint | None, include_synonyms: bool
) -> list[dict[str, Any]]:
    """Every broker setting the node has, read-only; ``advertised.listeners`` is the
    Kafka endpoint the node registered (its bound port, when it was configured as 0)."""
    defaults = NodeConfig()
    values: dict[str, str | None] = {n: get(config) for n, (_, get) in BROKER_SETTINGS.items()}
    types = {name: kind for name, (kind, _) in BROKER_SETTINGS.items()}
    host = config.kafka_listener.advertised_host or config.kafka_listener.host
    port = config.kafka_listener.port
    if advertised is not None:
        host, port = advertised.host, advertised.port
    values["advertised.listeners"] = _listener(config, host, port)
    types["advertised.listeners"] = LIST
    out = []
    for name in sorted(values):
        default = BROKER_SETTINGS[name][1](defaults) if name in BROKER_SETTINGS else None
        source = DEFAULT_CONFIG if values[name] == default else STATIC_BROKER_CONFIG
        synonyms = [Synonym(name, values[name], source)] if include_synonyms else []
        if include_synonyms and source == STATIC_BROKER_CONFIG and default is not None:
            synonyms.append(Synonym(name, default, DEFAULT_CONFIG))
        out.append(entry(name, values[name], source, types[name], synonyms, read_only=True))
    return out


def group_entries(config: NodeConfig, include_synonyms: bool) -> list[dict[str, Any]]:
    """A group's settings: none is set per group here, so each is the node's value."""
    out = []
    for name, broker_name in sorted(GROUP_SETTINGS.items()):
        kind, get = BROKER_SETTINGS[broker_name]
        value = get(config)
        synonyms = [Synonym(broker_name, value, DEFAULT_CONFIG)] if include_synonyms else []
        out.append(entry(name, value, DEFAULT_CONFIG, kind, synonyms))
    return out
