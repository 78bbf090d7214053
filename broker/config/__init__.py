"""Node configuration: a TOML file with documented defaults (docs/configuration.md).

Every key has a default, so an empty file runs a single local node. Unknown keys are refused
by name: a misspelt setting that is silently ignored is worse than a node that won't start.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rillet.broker.config.authorizer_config import AuthorizerConfig
from rillet.broker.config.http_config import HttpConfig
from rillet.broker.config.limits_config import LimitsConfig
from rillet.broker.config.quorum_config import QuorumConfig
from rillet.broker.config.quota_config import QuotasConfig
from rillet.broker.config.sasl_config import SaslConfig
from rillet.broker.config.tls_config import TlsConfig
from rillet.broker.errors import ConfigError
from rillet.metadata_quorum.classic_group_protocol import ClassicGroupConfig
from rillet.metadata_quorum.consumer_protocol import GroupLimits
from rillet.partition_store.config import LogConfig

SASL_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN")


def sasl_mechanism_list(key: str, text: str) -> tuple[str, ...]:
    """A comma-separated list of SASL mechanisms, each one rillet serves (ValueError)."""
    mechanisms = tuple(m.strip() for m in text.split(",") if m.strip())
    unknown = [m for m in mechanisms if m not in SASL_MECHANISMS]
    if unknown:
        raise ValueError(f"{key}: {', '.join(unknown)} not one of {', '.join(SASL_MECHANISMS)}")
    return mechanisms


@dataclass(frozen=True, slots=True)
class ListenerConfig:
    host: str = "127.0.0.1"
    port: int = 9092  # 0 picks an ephemeral port; the node prints the bound one
    advertised_host: str = ""  # empty: same as host
    # SASL mechanisms rillet's clients must authenticate with, as on the Kafka listener.
    # Empty: none (clients are who their TLS certificate says, or anonymous).
    sasl_mechanisms: str = ""

    def __post_init__(self) -> None:
        sasl_mechanism_list("listener.sasl_mechanisms", self.sasl_mechanisms)

    @property
    def sasl_mechanism_list(self) -> tuple[str, ...]:
        return sasl_mechanism_list("listener.sasl_mechanisms", self.sasl_mechanisms)


@dataclass(frozen=True, slots=True)
class KafkaListenerConfig:
    """The Kafka-protocol listener (docs/kafka-compatibility.md): off unless enabled."""

    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = 19092  # 0 picks an ephemeral port; the ready file names the bound one
    advertised_host: str = ""  # empty: same as host
    # SASL mechanisms clients must authenticate with, comma-separated (Kafka's
    # sasl.enabled.mechanisms): SCRAM-SHA-256, SCRAM-SHA-512, PLAIN. Empty: no SASL.
    sasl_mechanisms: str = ""
    # max.incremental.fetch.session.cache.slots: Kafka clients' fetch sessions (KIP-227) this
    # node keeps (0: none, every fetch is a full one). Kafka's default.
    max_incremental_fetch_session_cache_slots: int = 1000

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"kafka_listener.port must be 0..65535, not {self.port}")
        sasl_mechanism_list("kafka_listener.sasl_mechanisms", self.sasl_mechanisms)

    @property
    def sasl_mechanism_list(self) -> tuple[str, ...]:
        return sasl_mechanism_list("kafka_listener.sasl_mechanisms", self.sasl_mechanisms)


@dataclass(frozen=True, slots=True)
class TopicDefaults:
    """How topics are created (docs/configuration.md, ``[topics]``; Kafka's names in the
    comments): the partitions and replicas of a topic created without saying, and whether
    asking for an unknown topic creates it, as Kafka's brokers do by default."""

    # auto.create.topics.enable: a Metadata request that names an unknown topic and allows
    # auto-creation (Kafka clients' default, and rillet's producer) creates it.
    auto_create_topics_enable: bool = True
    num_partitions: int = 1  # num.partitions (CreateTopics asking -1, auto-creation)
    default_replication_factor: int = 1  # default.replication.factor (idem)
    max_partitions_per_topic: int = 10_000

    def __post_init__(self) -> None:
        if self.num_partitions > self.max_partitions_per_topic:
            raise ValueError(
                f"num_partitions {self.num_partitions} exceeds max_partitions_per_topic "
                f"{self.max_partitions_per_topic}"
            )


LOG_CLEANER_WORKERS = ("process", "thread")
MAX_NICENESS = 19  # the lowest CPU priority on Linux (os.nice)


@dataclass(frozen=True, slots=True)
class TasksConfig:
    retention_check_interval_ms: int = 300_000
    flush_check_interval_ms: int = 1_000
    deleted_files_check_interval_ms: int = 30_000
    # The background scrub re-checks the CRC of every stored batch (bit rot): a pass starts
    # this long after the previous one ended (-1: never), reading at most
    # log_scrub_bytes_per_second on average (docs/replication.md, "Damaged replicas").
    log_scrub_interval_ms: int = 6 * 3600 * 1000
    log_scrub_bytes_per_second: int = 8 * 1024 * 1024
    # The log cleaner (compacted topics, docs/storage-format.md "Compaction") looks for a log
    # to clean this often when it found none, and reads plus writes at most this many bytes
    # per second on average (-1: unlimited; Kafka's log.cleaner.io.max.bytes.per.second).
    log_cleaner_backoff_ms: int = 15_000
    log_cleaner_io_max_bytes_per_second: int = -1
    # A clean's key map holds about this many bytes at most (keys + ~100 B each); a larger
    # dirty part is cleaned over several cleans (Kafka's log.cleaner.dedupe.buffer.size).
    log_cleaner_dedupe_buffer_size: int = 128 * 1024 * 1024
    # Where a clean's file work (decoding and re-encoding records) runs: "process", a child
    # process per clean at log_cleaner_process_niceness, off the node's GIL; or "thread", a
    # worker thread of the node, which competes with the event loop for the GIL
    # (docs/compaction.md, "Cost").
    log_cleaner_worker: str = "process"
    log_cleaner_process_niceness: int = 10
    # Log every event-loop task step that held the loop this long, naming the task (0: off;
    # broker/runtime/slow_steps.py). A diagnostic: it costs two clock reads per task step.
    slow_task_step_ms: int = 0

    def __post_init__(self) -> None:
        if self.slow_task_step_ms < 0:
            raise ValueError("slow_task_step_ms must be >= 0 (0: off)")
        if self.log_scrub_interval_ms < 1 and self.log_scrub_interval_ms != -1:
            raise ValueError("log_scrub_interval_ms must be >= 1, or -1 to never scrub")
        if self.log_scrub_bytes_per_second < 1:
            raise ValueError("log_scrub_bytes_per_second must be >= 1")
        if self.log_cleaner_dedupe_buffer_size < 1:
            raise ValueError("log_cleaner_dedupe_buffer_size must be >= 1")
        if self.log_cleaner_backoff_ms < 1:
            raise ValueError("log_cleaner_backoff_ms must be >= 1")
        if self.log_cleaner_io_max_bytes_per_second == 0:
            raise ValueError("log_cleaner_io_max_bytes_per_second must be >= 1, or -1 (unlimited)")
        if self.log_cleaner_worker not in LOG_CLEANER_WORKERS:
            raise ValueError('log_cleaner_worker must be "process" or "thread"')
        if not 0 <= self.log_cleaner_process_niceness <= MAX_NICENESS:
            raise ValueError(f"log_cleaner_process_niceness must be 0..{MAX_NICENESS}")


@dataclass(frozen=True, slots=True)
class ReplicationConfig:
    """Partition replication between brokers (docs/configuration.md, ``[replication]``)."""

    # A follower that has not caught up with the leader's log end for this long leaves the
    # ISR (Kafka's replica.lag.time.max.ms, 30 s there; shorter here so acks=all stalls less).
    replica_lag_time_max_ms: int = 10_000
    fetch_wait_max_ms: int = 500  # a follower's long poll on its leader
    fetch_partition_max_bytes: int = 4 * 1024 * 1024
    fetch_response_max_bytes: int = 16 * 1024 * 1024
    # Partitions one replica fetch names, and a leader reads for one answer (besides those
    # named): a follower of thousands of partitions then fetches them in turns, so no
    # request or answer holds an event loop for long. -1: no limit (measured: the turns cost
    # more round trips than the shorter steps saved, docs/performance.md). No Kafka
    # equivalent.
    fetch_max_partitions: int = -1
    fetch_backoff_ms: int = 50  # after an error, before fetching from that leader again
    # Kafka's replica.high.watermark.checkpoint.interval.ms and its default. Shorter costs a
    # file write per moved partition each time (2.7% of a node's CPU at 1,000 busy
    # partitions every 2 s); a checkpoint only limits what a restarted replica serves
    # before its leader speaks.
    high_watermark_checkpoint_interval_ms: int = 5_000
    default_min_insync_replicas: int = 1  # topic config min.insync.replicas overrides it
    # A follower whose fetch connection closed leaves the ISR after this unless it fetches
    # and catches up again: acks=all writes wait for a dead follower this long, not for
    # replica_lag_time_max_ms.
    follower_disconnect_grace_ms: int = 300


@dataclass(frozen=True, slots=True)
class GroupsConfig:
    """Consumer-group coordination (docs/consumer-groups.md, ``[groups]``)."""

    heartbeat_interval_ms: int = 300  # how often a settled member heartbeats
    # While a member still has partitions to release or to receive, it heartbeats this
    # often, so a rebalance completes in a few round trips.
    converging_heartbeat_interval_ms: int = 30
    # Classic (JoinGroup/SyncGroup) groups, Kafka's group.* settings. The first join round
    # of an empty group waits initial_rebalance_delay_ms for more members (Kafka: 3000; 0
    # here, so a lone consumer starts at once).
    initial_rebalance_delay_ms: int = 0
    min_session_timeout_ms: int = 1_000
    max_session_timeout_ms: int = 1_800_000
    max_size: int = 1_000  # members per classic group
    # Kafka consumer-protocol members (ConsumerGroupHeartbeat), Kafka's group.consumer.*:
    # they send no session timeout, and a group takes at most consumer_max_size of them.
    consumer_session_timeout_ms: int = 45_000
    consumer_max_size: int = 1_000

    def __post_init__(self) -> None:
        self.classic()  # checks the classic settings (raises ValueError)
        self.consumer()  # and the consumer-protocol ones

    def consumer(self) -> GroupLimits:
        return GroupLimits(self.consumer_session_timeout_ms, self.consumer_max_size)

    def classic(self) -> ClassicGroupConfig:
        return ClassicGroupConfig(
            self.initial_rebalance_delay_ms,
            self.min_session_timeout_ms,
            self.max_session_timeout_ms,
            self.max_size,
        )


@dataclass(frozen=True, slots=True)
class NodeConfig:
    node_id: int = 1
    cluster_id: str = "rillet-local"
    data_dir: Path = Path("rillet-data")
    rack: str | None = None
    listener: ListenerConfig = field(default_factory=ListenerConfig)
    kafka_listener: KafkaListenerConfig = field(default_factory=KafkaListenerConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    topics: TopicDefaults = field(default_factory=TopicDefaults)
    tasks: TasksConfig = field(default_factory=TasksConfig)
    log: LogConfig = field(default_factory=LogConfig)
    quorum: QuorumConfig = field(default_factory=QuorumConfig)
    replication: ReplicationConfig = field(default_factory=ReplicationConfig)
    groups: GroupsConfig = field(default_factory=GroupsConfig)
    http: HttpConfig = field(default_factory=HttpConfig)
    quotas: QuotasConfig = field(default_factory=QuotasConfig)
    tls: TlsConfig = field(default_factory=TlsConfig)
    authorizer: AuthorizerConfig = field(default_factory=AuthorizerConfig)
    sasl: SaslConfig = field(default_factory=SaslConfig)

    @property
    def advertised_host(self) -> str:
        return self.listener.advertised_host or self.listener.host

    def __post_init__(self) -> None:
        kafka = self.kafka_listener
        if kafka.enabled and kafka.port != 0 and kafka.port == self.listener.port:
            raise ValueError(f"kafka_listener.port {kafka.port} is also listener.port")
        http = self.http
        if http.enabled and http.port != 0 and http.port == self.listener.port:
            raise ValueError(f"http.port {http.port} is also listener.port")
        if http.tls and not self.tls.enabled:
            raise ValueError("http.tls = true needs tls.certfile and tls.keyfile")

    @property
    def kafka_advertised_host(self) -> str:
        return self.kafka_listener.advertised_host or self.kafka_listener.host


def load_config(path: Path | None, overrides: dict[str, Any] | None = None) -> NodeConfig:
    """Read a TOML file (or none) and apply dotted-key overrides like ``listener.port``."""
    raw: dict[str, Any] = {}
    if path is not None:
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    for dotted, value in (overrides or {}).items():
        if value is None:
            continue
        node = raw
        *parents, leaf = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    config: NodeConfig = _build(NodeConfig, raw, "")
    return config


# Keys renamed to Kafka's names: an old config file gets a line naming the new key.
RENAMED_KEYS = {
    "topics.replication_factor": "default_replication_factor",
    "topics.auto_create_topics": "auto_create_topics_enable",
}


def _build(cls: Any, raw: dict[str, Any], prefix: str) -> Any:
    if not isinstance(raw, dict):
        raise ConfigError(f"{prefix.rstrip('.') or 'config'} must be a table")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(raw) - set(fields))
    renamed = [
        f"{prefix}{k} is now {prefix}{RENAMED_KEYS[prefix + k]}"
        for k in unknown
        if prefix + k in RENAMED_KEYS
    ]
    if renamed:
        raise ConfigError(f"renamed config key(s): {'; '.join(renamed)}")
    if unknown:
        raise ConfigError(f"unknown config key(s): {', '.join(prefix + k for k in unknown)}")
    kwargs: dict[str, Any] = {}
    for name, f in fields.items():
        if name not in raw:
            continue
        value = raw[name]
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        key = prefix + name
        if dataclasses.is_dataclass(default):
            kwargs[name] = _build(type(default), value, key + ".")
        elif "optional_bool" in f.metadata:
            if not isinstance(value, bool):
                raise ConfigError(f"{key} must be true or false (or left out)")
            kwargs[name] = value
        elif "item" in f.metadata:  # a list of tables, e.g. quorum.voters
            if not isinstance(value, list):
                raise ConfigError(f"{key} must be a list of tables")
            kwargs[name] = tuple(
                _build(f.metadata["item"], item, f"{key}[{i}].") for i, item in enumerate(value)
            )
        else:
            kwargs[name] = _coerce(key, value, default)
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"invalid {prefix.rstrip('.') or 'config'}: {exc}") from exc


# Range rules for integer settings, checked when the file is read so that a mistake stops
# the node at start with the key's name (docs/configuration.md, "Value ranges"):
# - a port is 0..65535 (0: ephemeral), never wrapped modulo 65536;
# - no integer is negative, except -1 where it is documented to mean "never"/"no limit"
#   (the keys below, and any key whose default is -1);
# - counts, sizes and intervals that a zero would break (a node that accepts no connection,
#   a busy loop, a zero-byte fetch) are at least 1.
PORT_MAX = 65535
MINUS_ONE_ALLOWED = frozenset({"log.retention_ms", "tasks.log_scrub_interval_ms"})
AT_LEAST_ONE = frozenset(
    {
        "limits.max_frame_bytes",
        "limits.max_in_flight_requests_per_connection",
        "limits.max_connections",
        "limits.receive_buffer_bytes",
        "limits.max_produce_timeout_ms",
        "limits.sasl_server_max_receive_size",
        "limits.request_decode_offload_bytes",
        "limits.request_decode_threads",
        "topics.num_partitions",
        "topics.default_replication_factor",
        "topics.max_partitions_per_topic",
        "tasks.retention_check_interval_ms",
        "tasks.flush_check_interval_ms",
        "tasks.deleted_files_check_interval_ms",
        "replication.replica_lag_time_max_ms",
        "replication.fetch_partition_max_bytes",
        "replication.fetch_response_max_bytes",
        "replication.fetch_max_partitions",
        "replication.high_watermark_checkpoint_interval_ms",
        "replication.default_min_insync_replicas",
        "groups.heartbeat_interval_ms",
        "groups.converging_heartbeat_interval_ms",
        "groups.max_size",
        "quorum.raft_heartbeat_ms",
        "quorum.broker_session_timeout_ms",
        "quorum.broker_heartbeat_interval_ms",
        "quorum.controller_tick_ms",
        "quorum.request_timeout_ms",
        "quorum.leader_rebalance_interval_ms",
        "http.request_head_timeout_ms",
        "http.max_connections",
        "http.max_connections_per_ip",
        "sasl.failed_authentication_tracked_max",
        "sasl.password_check_threads",
    }
)


def check_int_range(key: str, value: int, default: int) -> None:
    """Refuse an integer setting outside its range (ConfigError naming the key)."""
    leaf = key.rsplit(".", 1)[-1]
    if leaf == "port" or leaf.endswith("_port"):
        if not 0 <= value <= PORT_MAX:
            raise ConfigError(f"{key} must be 0..{PORT_MAX} (0: ephemeral), got {value}")
        return
    if value == -1 and (default == -1 or key in MINUS_ONE_ALLOWED):
        return
    least = 1 if key in AT_LEAST_ONE else 0
    if value < least:
        never = " (or -1)" if default == -1 or key in MINUS_ONE_ALLOWED else ""
        raise ConfigError(f"{key} must be >= {least}{never}, got {value}")


def _coerce(key: str, value: Any, default: Any) -> Any:
    if isinstance(default, Path):
        if not isinstance(value, str):
            raise ConfigError(f"{key} must be a path string")
        return Path(value)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false")
        return value
    if isinstance(default, int):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError(f"{key} must be an integer")
        check_int_range(key, value, default)
        return value
    if isinstance(default, float):
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ConfigError(f"{key} must be a number")
        return float(value)
    if isinstance(default, str) or default is None:
        if not isinstance(value, str):
            raise ConfigError(f"{key} must be a string")
        return value
    raise ConfigError(f"{key}: unsupported value {value!r}")
