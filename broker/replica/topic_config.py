"""Per-topic configuration overrides, spelt as Kafka spells them (``retention.ms``).

A topic stores only the keys it overrides; the effective LogConfig is the node's ``[log]``
defaults with those applied, so changing a node default changes every topic that did not
override it.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from rillet.broker.errors import TopicError
from rillet.broker.replica.replication.replication_throttle import (
    TOPIC_THROTTLE_CONFIGS,
    ThrottleConfigError,
    normalised_replicas,
)
from rillet.partition_store.config import (
    CLEANUP_POLICIES,
    COMPACT_POLICY,
    DELETE_POLICY,
    TIMESTAMP_TYPES,
    LogConfig,
)
from rillet.wire.error_codes import ErrorCode

# topic config key -> LogConfig field
TOPIC_CONFIG_KEYS: dict[str, str] = {
    "segment.bytes": "segment_bytes",
    "segment.ms": "segment_ms",
    "retention.ms": "retention_ms",
    "retention.bytes": "retention_bytes",
    "segment.index.interval.bytes": "index_interval_bytes",
    "index.interval.bytes": "index_interval_bytes",
    "max.message.bytes": "max_batch_bytes",
    "flush.messages": "flush_messages",
    "flush.ms": "flush_ms",
    "file.delete.delay.ms": "file_delete_delay_ms",
    "message.timestamp.before.max.ms": "message_timestamp_before_max_ms",
    "message.timestamp.after.max.ms": "message_timestamp_after_max_ms",
    "delete.retention.ms": "delete_retention_ms",
    "min.compaction.lag.ms": "min_compaction_lag_ms",
    "max.compaction.lag.ms": "max_compaction_lag_ms",
}
# topic config key -> LogConfig field, for Kafka's DOUBLE settings
FLOAT_TOPIC_CONFIGS: dict[str, str] = {"min.cleanable.dirty.ratio": "min_cleanable_dirty_ratio"}
CLEANUP_POLICY_CONFIG = "cleanup.policy"
# topic config key -> (LogConfig field, the values it accepts)
STRING_TOPIC_CONFIGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "message.timestamp.type": ("message_timestamp_type", TIMESTAMP_TYPES),
    CLEANUP_POLICY_CONFIG: ("cleanup_policy", CLEANUP_POLICIES),
}
# Settings whose value is a comma-separated list (Kafka's APPEND and SUBTRACT apply).
LIST_TOPIC_CONFIGS = (CLEANUP_POLICY_CONFIG,)
# Replication settings the controller reads (true/false).
BOOLEAN_TOPIC_CONFIGS = ("unclean.leader.election.enable",)
# Replication settings the partition leader reads (positive integers).
MIN_INSYNC_REPLICAS_CONFIG = "min.insync.replicas"
REPLICATION_INT_CONFIGS = (MIN_INSYNC_REPLICAS_CONFIG,)
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_NAME = re.compile(r"^[A-Za-z0-9._-]+$")


def validate_topic_name(name: str) -> None:
    """Kafka's rules: 1-249 chars of [A-Za-z0-9._-], not "." or ".."."""
    if not name or name in (".", ".."):
        raise TopicError(ErrorCode.INVALID_TOPIC, f"illegal topic name {name!r}")
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise TopicError(
            ErrorCode.INVALID_TOPIC, f"topic name longer than {MAX_TOPIC_NAME_LENGTH} chars"
        )
    if not _LEGAL_NAME.match(name):
        raise TopicError(
            ErrorCode.INVALID_TOPIC,
            f"topic name {name!r} may contain only ASCII letters, digits, '.', '_' and '-'",
        )


def validate_topic_configs(configs: dict[str, str], defaults: LogConfig) -> dict[str, str]:
    """Check overrides and return them normalised; raises TopicError(INVALID_CONFIG)."""
    out: dict[str, str] = {}
    for key, raw in configs.items():
        value = normalise_cleanup_policy(str(raw)) if key == CLEANUP_POLICY_CONFIG else raw
        if key in FLOAT_TOPIC_CONFIGS:
            try:
                out[key] = repr(float(value))
            except (TypeError, ValueError):
                raise TopicError(ErrorCode.INVALID_CONFIG, f"{key} must be a number") from None
            continue
        if key in BOOLEAN_TOPIC_CONFIGS:
            if str(value).lower() not in ("true", "false"):
                raise TopicError(ErrorCode.INVALID_CONFIG, f"{key} must be true or false")
            out[key] = str(value).lower()
            continue
        if key in STRING_TOPIC_CONFIGS:
            allowed = STRING_TOPIC_CONFIGS[key][1]
            if value not in allowed:
                raise TopicError(ErrorCode.INVALID_CONFIG, f"{key} must be one of {allowed}")
            out[key] = value
            continue
        if key in REPLICATION_INT_CONFIGS:
            if not str(value).isdigit() or int(value) < 1:
                raise TopicError(ErrorCode.INVALID_CONFIG, f"{key} must be an integer >= 1")
            out[key] = str(int(value))
            continue
        if key in TOPIC_THROTTLE_CONFIGS:
            try:
                out[key] = normalised_replicas(key, str(value))
            except ThrottleConfigError as exc:
                raise TopicError(ErrorCode.INVALID_CONFIG, str(exc)) from None
            continue
        if key not in TOPIC_CONFIG_KEYS:
            known = ", ".join(
                sorted(
                    [
                        *TOPIC_CONFIG_KEYS,
                        *TOPIC_THROTTLE_CONFIGS,
                        *STRING_TOPIC_CONFIGS,
                        *FLOAT_TOPIC_CONFIGS,
                        *BOOLEAN_TOPIC_CONFIGS,
                        *REPLICATION_INT_CONFIGS,
                    ]
                )
            )
            raise TopicError(
                ErrorCode.INVALID_CONFIG, f"unknown topic config {key!r}; known: {known}"
            )
        try:
            int(value)
        except (TypeError, ValueError):
            raise TopicError(ErrorCode.INVALID_CONFIG, f"{key} must be an integer") from None
        out[key] = str(int(value))
    effective_log_config(defaults, out)  # runs LogConfig's own validation
    return out


def effective_log_config(defaults: LogConfig, configs: dict[str, str]) -> LogConfig:
    """The node defaults with a topic's overrides applied."""
    changes: dict[str, Any] = {
        TOPIC_CONFIG_KEYS[k]: int(v) for k, v in configs.items() if k in TOPIC_CONFIG_KEYS
    }
    changes.update(
        (STRING_TOPIC_CONFIGS[k][0], v) for k, v in configs.items() if k in STRING_TOPIC_CONFIGS
    )
    changes.update(
        (FLOAT_TOPIC_CONFIGS[k], float(v)) for k, v in configs.items() if k in FLOAT_TOPIC_CONFIGS
    )
    try:
        return dataclasses.replace(defaults, **changes)
    except (ValueError, TypeError) as exc:
        raise TopicError(ErrorCode.INVALID_CONFIG, f"invalid topic config: {exc}") from exc


def normalise_cleanup_policy(value: str) -> str:
    """Kafka's list (``compact,delete``, ``delete, compact`` ...) in our one spelling;
    anything else is returned as is for the check to refuse."""
    parts = {p.strip() for p in value.split(",") if p.strip()}
    if parts == {DELETE_POLICY, COMPACT_POLICY}:
        return f"{COMPACT_POLICY},{DELETE_POLICY}"
    return parts.pop() if len(parts) == 1 else value


def edited_list(current: str, append: str = "", subtract: str = "") -> str:
    """A list setting's value after Kafka's APPEND (items not there yet go at the end) and
    SUBTRACT (items removed); the items of ``append`` and ``subtract`` are comma-separated."""
    items = [p.strip() for p in current.split(",") if p.strip()]
    items += [p.strip() for p in append.split(",") if p.strip() and p.strip() not in items]
    gone = {p.strip() for p in subtract.split(",")}
    return ",".join(dict.fromkeys(p for p in items if p not in gone))


def min_insync_replicas(configs: dict[str, str], default: int) -> int:
    """How many in-sync replicas an acks=all write needs (NOT_ENOUGH_REPLICAS below it)."""
    return int(configs.get(MIN_INSYNC_REPLICAS_CONFIG, default))


def topic_config_defaults(log: LogConfig, default_min_insync_replicas: int) -> dict[str, str]:
    """What each topic setting is for a topic without an override, as Kafka names them
    (DescribeConfigs and the console show these as the defaults)."""
    out = {key: str(getattr(log, attr)) for key, attr in TOPIC_CONFIG_KEYS.items()}
    for key, (attr, _) in STRING_TOPIC_CONFIGS.items():
        out[key] = str(getattr(log, attr))
    for key, attr in FLOAT_TOPIC_CONFIGS.items():
        out[key] = repr(getattr(log, attr))
    out[MIN_INSYNC_REPLICAS_CONFIG] = str(default_min_insync_replicas)
    out.update(dict.fromkeys(BOOLEAN_TOPIC_CONFIGS, "false"))  # the controller's default
    return out
