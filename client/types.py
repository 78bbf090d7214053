"""Value types of the client api: small, immutable, cheap to build."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple


class TopicPartition(NamedTuple):
    topic: str
    partition: int


class RecordMetadata(NamedTuple):
    """Where an acknowledged record went (offset -1 with acks=0: nothing was confirmed).

    ``timestamp_ms`` is the record's own timestamp, or the node's append time for topics
    that use log-append time.
    """

    topic: str
    partition: int
    offset: int
    timestamp_ms: int


class ConsumerRecord(NamedTuple):
    """One record as ``poll`` returns it.

    A NamedTuple because one is built per record and must be cheap; ``headers`` is an empty
    tuple (shared, immutable) when the record has none; a header's value may be None.
    """

    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    key: bytes | None
    value: bytes | None
    headers: Sequence[tuple[str, bytes | None]]


class SendCounts(NamedTuple):
    """What a producer has sent so far (``Producer.send_counts``), retries included."""

    requests: int  # Produce requests put on the wire
    batches: int  # record batches they carried (one per partition per request at most)


class OffsetAndTimestamp(NamedTuple):
    offset: int
    timestamp_ms: int


@dataclass(frozen=True, slots=True)
class NewTopic:
    """A topic to create; -1 means the node's default (``num_partitions``,
    ``replication_factor`` in its configuration), like Kafka's ``Optional.empty()``."""

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    partition: int
    leader: int  # node id, -1 when the partition has no leader
    leader_epoch: int
    replicas: list[int]
    isr: list[int]


@dataclass(frozen=True, slots=True)
class TopicDescription:
    name: str
    partitions: list[PartitionInfo]
    configs: dict[str, str]


class NodeInfo(NamedTuple):
    node_id: int
    host: str
    port: int
    rack: str | None


@dataclass(frozen=True, slots=True)
class ClusterDescription:
    cluster_id: str
    controller_id: int
    nodes: list[NodeInfo]
