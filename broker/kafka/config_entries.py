"""DescribeConfigs entries as Kafka describes them: each setting's type, where its value
comes from, and (when asked) its synonyms, the settings that would give it a value.

Kafka's admin tools print these: ``kafka-configs --describe --all`` shows a setting's
source and synonyms, and clients read a setting's type to parse its value. Every topic
setting rillet has is typed as Kafka types it; a topic setting a topic does not override
takes the node's value, whose Kafka name is its broker synonym (``retention.ms`` and
``log.retention.ms``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from rillet.broker.kafka import shapes

# Kafka's ConfigType (DescribeConfigs v3+)
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = range(1, 10)
# Kafka's ConfigSource
DYNAMIC_TOPIC_CONFIG = 1
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5
GROUP_CONFIG = 8

# topic setting -> (Kafka's type, the broker setting that gives its default)
TOPIC_CONFIG_TYPES: dict[str, tuple[int, str]] = {
    "cleanup.policy": (LIST, "log.cleanup.policy"),
    "delete.retention.ms": (LONG, "log.cleaner.delete.retention.ms"),
    "file.delete.delay.ms": (LONG, "log.segment.delete.delay.ms"),
    "flush.messages": (LONG, "log.flush.interval.messages"),
    "flush.ms": (LONG, "log.flush.interval.ms"),
    "index.interval.bytes": (INT, "log.index.interval.bytes"),
    "segment.index.interval.bytes": (INT, "log.index.interval.bytes"),
    "max.message.bytes": (INT, "message.max.bytes"),
    "message.timestamp.after.max.ms": (LONG, "log.message.timestamp.after.max.ms"),
    "message.timestamp.before.max.ms": (LONG, "log.message.timestamp.before.max.ms"),
    "message.timestamp.type": (STRING, "log.message.timestamp.type"),
    "max.compaction.lag.ms": (LONG, "log.cleaner.max.compaction.lag.ms"),
    "min.cleanable.dirty.ratio": (DOUBLE, "log.cleaner.min.cleanable.ratio"),
    "min.compaction.lag.ms": (LONG, "log.cleaner.min.compaction.lag.ms"),
    "min.insync.replicas": (INT, "min.insync.replicas"),
    "retention.bytes": (LONG, "log.retention.bytes"),
    "retention.ms": (LONG, "log.retention.ms"),
    "segment.bytes": (INT, "log.segment.bytes"),
    "segment.ms": (LONG, "log.roll.ms"),
    "unclean.leader.election.enable": (BOOLEAN, "unclean.leader.election.enable"),
}


class Synonym(NamedTuple):
    name: str
    value: str | None
    source: int


def entry(
    name: str,
    value: str | None,
    source: int,
    config_type: int,
    synonyms: Sequence[Synonym] = (),
    read_only: bool = False,
) -> shapes.DescribeConfigsResourceResultShape:
    """One DescribeConfigs entry, as :func:`~rillet.broker.kafka.entities.build` takes it."""
    return {
        "name": name,
        "value": value,
        "read_only": read_only,
        "config_source": source,
        "is_sensitive": False,
        "synonyms": [{"name": s.name, "value": s.value, "source": s.source} for s in synonyms],
        "config_type": config_type,
        "documentation": None,
    }


def topic_entry(
    key: str, override: str | None, default: str, include_synonyms: bool
) -> shapes.DescribeConfigsResourceResultShape:
    """A topic setting: its override if the topic has one, else the node's value.

    Synonyms, most specific first as Kafka lists them: the topic's override, then the
    node's setting under its broker name (a default of the node, as far as a topic sees).
    """
    config_type, broker_name = TOPIC_CONFIG_TYPES.get(key, (STRING, ""))
    synonyms: list[Synonym] = []
    if include_synonyms:
        if override is not None:
            synonyms.append(Synonym(key, override, DYNAMIC_TOPIC_CONFIG))
        if broker_name:
            synonyms.append(Synonym(broker_name, default, DEFAULT_CONFIG))
    if override is not None:
        return entry(key, override, DYNAMIC_TOPIC_CONFIG, config_type, synonyms)
    return entry(key, default, DEFAULT_CONFIG, config_type, synonyms)
