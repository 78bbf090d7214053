"""The client's cache of cluster metadata: nodes, topics, partition leaders.

Pure data, updated from Metadata responses; no I/O, so the merge rules are easy to test. One
rule matters for correctness: a partition's entry is replaced only by one with the same or a
newer leader epoch. Nodes learn leadership changes at different moments, so a response from a
lagging node must not send the client back to a leader that was already replaced.
"""

from __future__ import annotations

from collections.abc import Iterable

from rillet.client.types import TopicPartition
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import BrokerInfo, MetadataResponse, PartitionMetadata

NO_LEADER = -1


class ClusterMetadata:
    """Brokers by id, and per topic the partitions' leaders and epochs."""

    def __init__(self) -> None:
        self.cluster_id: str | None = None
        self.controller_id: int = -1
        self.brokers: dict[int, BrokerInfo] = {}
        self.topic_configs: dict[str, dict[str, str]] = {}
        # The largest batch a node takes for a topic without max.message.bytes of its own.
        self.default_max_batch_bytes: int | None = None
        # topic -> partition id -> metadata; partitions are indexed by id, not list position.
        self._partitions: dict[str, dict[int, PartitionMetadata]] = {}
        # Last error a node reported for a topic we asked about (UNKNOWN_TOPIC_OR_PARTITION...).
        self.topic_errors: dict[str, ErrorCode] = {}
        self.version = 0

    def update(self, response: MetadataResponse, requested: Iterable[str] | None) -> None:
        """Merge a response to a request for ``requested`` topics (None: all topics)."""
        self.cluster_id = response.cluster_id
        self.controller_id = response.controller_id
        if response.brokers:
            self.brokers = {b.node_id: b for b in response.brokers}
        if response.max_batch_bytes > 0:
            self.default_max_batch_bytes = response.max_batch_bytes
        seen: set[str] = set()
        for topic in response.topics:
            seen.add(topic.name)
            code = ErrorCode.from_wire(topic.error_code)
            if code is not ErrorCode.NONE:
                self.topic_errors[topic.name] = code
                if code is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                    self._forget(topic.name)
                continue
            self.topic_errors.pop(topic.name, None)
            self.topic_configs[topic.name] = dict(topic.configs)
            known = self._partitions.get(topic.name, {})
            merged: dict[int, PartitionMetadata] = {}
            for p in topic.partitions:
                old = known.get(p.partition)
                merged[p.partition] = old if old and old.leader_epoch > p.leader_epoch else p
            self._partitions[topic.name] = merged
        if requested is None:
            for name in [n for n in self._partitions if n not in seen]:
                self._forget(name)
        self.version += 1

    def _forget(self, topic: str) -> None:
        self._partitions.pop(topic, None)
        self.topic_configs.pop(topic, None)

    def mark_stale(self, tp: TopicPartition) -> None:
        """Forget a partition's leader after it said it is not the leader any more.

        The epoch stays, so an older answer cannot restore the leader we just left.
        """
        parts = self._partitions.get(tp[0])
        p = parts.get(tp[1]) if parts else None
        if parts is not None and p is not None:
            parts[tp[1]] = PartitionMetadata(
                p.partition, NO_LEADER, p.leader_epoch, p.replicas, p.isr, p.error_code
            )

    def topics(self) -> list[str]:
        return sorted(self._partitions)

    def has_topic(self, topic: str) -> bool:
        return topic in self._partitions

    def partition_count(self, topic: str) -> int | None:
        parts = self._partitions.get(topic)
        return len(parts) if parts is not None else None

    def partitions(self, topic: str) -> list[PartitionMetadata]:
        parts = self._partitions.get(topic)
        return [parts[i] for i in sorted(parts)] if parts else []

    def leader_for(self, tp: TopicPartition | tuple[str, int]) -> int | None:
        """The leader's node id, or None when unknown (no such partition, or no leader)."""
        parts = self._partitions.get(tp[0])
        if parts is None:
            return None
        p = parts.get(tp[1])
        if p is None or p.leader_id < 0 or p.leader_id not in self.brokers:
            return None
        return p.leader_id

    def leader_epoch(self, tp: TopicPartition | tuple[str, int]) -> int:
        """The leader epoch we know for the partition, -1 when unknown."""
        parts = self._partitions.get(tp[0])
        p = parts.get(tp[1]) if parts else None
        return p.leader_epoch if p is not None else -1
