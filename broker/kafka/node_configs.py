"""A node's own settings under Kafka's broker setting names, for DescribeConfigs on a broker
resource (``kafka-configs --entity-type brokers --describe --all``) and on a group resource
(``--entity-type groups``: what a group gets from the node).

Node settings come from the node's TOML file at start-up and change only with a restart,
so every broker setting is read-only; its source is the node's file when its value differs
from rillet's default, else the default. Only what the node really has is listed.
"""

from __future__ import annotations

from collections.abc import Callable

from rillet.broker.config import NodeConfig
from rillet.broker.kafka import shapes
from rillet.broker.kafka.config_entries import (
    BOOLEAN,
    DEFAULT_CONFIG,
    DOUBLE,
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


def _cleaner_rate(c: NodeConfig) -> str:
    rate = c.tasks.log_cleaner_io_max_bytes_per_second
    return "1.7976931348623157E308" if rate < 0 else str(float(rate))  # Kafka's unlimited


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _value(config: NodeConfig, name: str) -> str | None:
    """Broker setting ``name``'s value on a node with ``config``."""
    get = BROKER_SETTINGS[name][1]
    if callable(get):
        return get(config)
    section, attr = get.split(".")
    return str(getattr(getattr(config, section), attr))


# Kafka's broker setting name -> (Kafka's type, its value on a node: a function of the node's
# settings, or the dotted path of the node setting it is)
BROKER_SETTINGS: dict[str, tuple[int, Callable[[NodeConfig], str | None] | str]] = {
    "node.id": (INT, lambda c: str(c.node_id)),
    "broker.id": (INT, lambda c: str(c.node_id)),
    "broker.rack": (STRING, lambda c: c.rack),
    "listeners": (LIST, lambda c: _listener(c, c.kafka_listener.host, c.kafka_listener.port)),
    "log.dirs": (STRING, lambda c: str(c.data_dir.resolve())),
    "num.partitions": (INT, "topics.num_partitions"),
    "default.replication.factor": (INT, "topics.default_replication_factor"),
    "auto.create.topics.enable": (BOOLEAN, lambda c: _bool(c.topics.auto_create_topics_enable)),
    "min.insync.replicas": (INT, "replication.default_min_insync_replicas"),
    "unclean.leader.election.enable": (BOOLEAN, lambda c: "false"),
    "log.cleanup.policy": (LIST, "log.cleanup_policy"),
    "log.cleaner.delete.retention.ms": (LONG, "log.delete_retention_ms"),
    "log.cleaner.min.cleanable.ratio": (DOUBLE, "log.min_cleanable_dirty_ratio"),
    "log.cleaner.min.compaction.lag.ms": (LONG, "log.min_compaction_lag_ms"),
    "log.cleaner.max.compaction.lag.ms": (LONG, "log.max_compaction_lag_ms"),
    "log.cleaner.io.max.bytes.per.second": (DOUBLE, _cleaner_rate),
    "log.cleaner.backoff.ms": (LONG, "tasks.log_cleaner_backoff_ms"),
    "log.cleaner.dedupe.buffer.size": (LONG, "tasks.log_cleaner_dedupe_buffer_size"),
    "log.segment.bytes": (INT, "log.segment_bytes"),
    "log.roll.ms": (LONG, "log.segment_ms"),
    "log.retention.ms": (LONG, "log.retention_ms"),
    "log.retention.bytes": (LONG, "log.retention_bytes"),
    "log.index.interval.bytes": (INT, "log.index_interval_bytes"),
    "message.max.bytes": (INT, "log.max_batch_bytes"),
    "log.flush.interval.messages": (LONG, "log.flush_messages"),
    "log.flush.interval.ms": (LONG, "log.flush_ms"),
    "log.segment.delete.delay.ms": (LONG, "log.file_delete_delay_ms"),
    "log.message.timestamp.type": (STRING, "log.message_timestamp_type"),
    "log.message.timestamp.before.max.ms": (LONG, "log.message_timestamp_before_max_ms"),
    "log.message.timestamp.after.max.ms": (LONG, "log.message_timestamp_after_max_ms"),
    "log.retention.check.interval.ms": (LONG, "tasks.retention_check_interval_ms"),
    "socket.request.max.bytes": (INT, "limits.max_frame_bytes"),
    "queued.max.request.bytes": (LONG, "limits.queued_max_request_bytes"),
    "max.connections": (INT, "limits.max_connections"),
    "max.incremental.fetch.session.cache.slots": (
        INT,
        "kafka_listener.max_incremental_fetch_session_cache_slots",
    ),
    "max.connections.per.ip": (INT, "limits.max_connections_per_ip"),
    "connections.max.idle.ms": (LONG, "limits.connections_max_idle_ms"),
    "replica.lag.time.max.ms": (LONG, "replication.replica_lag_time_max_ms"),
    "replica.fetch.wait.max.ms": (INT, "replication.fetch_wait_max_ms"),
    "replica.fetch.max.bytes": (INT, "replication.fetch_partition_max_bytes"),
    "replica.fetch.response.max.bytes": (INT, "replication.fetch_response_max_bytes"),
    "replica.fetch.backoff.ms": (INT, "replication.fetch_backoff_ms"),
    "replica.high.watermark.checkpoint.interval.ms": (
        LONG,
        "replication.high_watermark_checkpoint_interval_ms",
    ),
    "group.initial.rebalance.delay.ms": (INT, "groups.initial_rebalance_delay_ms"),
    "group.min.session.timeout.ms": (INT, "groups.min_session_timeout_ms"),
    "group.max.session.timeout.ms": (INT, "groups.max_session_timeout_ms"),
    "group.max.size": (INT, "groups.max_size"),
    "group.consumer.heartbeat.interval.ms": (INT, "groups.heartbeat_interval_ms"),
}
# A group's settings and the broker setting each takes its value from.
GROUP_SETTINGS: dict[str, str] = {
    "consumer.heartbeat.interval.ms": "group.consumer.heartbeat.interval.ms",
}


def broker_entries(
    config: NodeConfig, advertised: KafkaEndpoint | None, include_synonyms: bool
) -> list[shapes.DescribeConfigsResourceResultShape]:
    """Every broker setting the node has, read-only; ``advertised.listeners`` is the
    Kafka endpoint the node registered (its bound port, when it was configured as 0)."""
    defaults = NodeConfig()
    values = {name: _value(config, name) for name in BROKER_SETTINGS}
    types = {name: kind for name, (kind, _) in BROKER_SETTINGS.items()}
    host = config.kafka_listener.advertised_host or config.kafka_listener.host
    port = config.kafka_listener.port
    if advertised is not None:
        host, port = advertised.host, advertised.port
    values["advertised.listeners"] = _listener(config, host, port)
    types["advertised.listeners"] = LIST
    out = []
    for name in sorted(values):
        default = _value(defaults, name) if name in BROKER_SETTINGS else None
        source = DEFAULT_CONFIG if values[name] == default else STATIC_BROKER_CONFIG
        synonyms = [Synonym(name, values[name], source)] if include_synonyms else []
        if include_synonyms and source == STATIC_BROKER_CONFIG and default is not None:
            synonyms.append(Synonym(name, default, DEFAULT_CONFIG))
        out.append(entry(name, values[name], source, types[name], synonyms, read_only=True))
    return out


def group_entries(
    config: NodeConfig, include_synonyms: bool
) -> list[shapes.DescribeConfigsResourceResultShape]:
    """A group's settings: none is set per group here, so each is the node's value."""
    out = []
    for name, broker_name in sorted(GROUP_SETTINGS.items()):
        kind = BROKER_SETTINGS[broker_name][0]
        value = _value(config, broker_name)
        synonyms = [Synonym(broker_name, value, DEFAULT_CONFIG)] if include_synonyms else []
        out.append(entry(name, value, DEFAULT_CONFIG, kind, synonyms))
    return out
