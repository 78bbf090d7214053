"""Which replicas one side of replication throttles now, read from the metadata state.

Both sides apply Kafka's rule (replication_throttle.py): a replica counts when its topic's
list for that side names (partition, this node), and the follower is out of the ISR. The
answers are kept until the next metadata entry is applied, so a fetch round of thousands of
partitions costs one dictionary look-up each while nothing changes. Each side has one
:class:`ThrottleGate` per node, following the node's rate setting.
"""

from __future__ import annotations

from rillet.broker.replica.replication.replication_throttle import (
    FOLLOWER_RATE,
    FOLLOWER_REPLICAS,
    LEADER_RATE,
    LEADER_REPLICAS,
    ThrottleGate,
    broker_rate,
    is_throttled,
)
from rillet.metadata_quorum.state import MetadataState


class ThrottledReplicas:
    """One side's throttle on this node: ``leader`` (answering followers) or not (fetching)."""

    def __init__(self, node_id: int, leader: bool) -> None:
        self._node_id = node_id
        self._list_key = LEADER_REPLICAS if leader else FOLLOWER_REPLICAS
        self._rate_key = LEADER_RATE if leader else FOLLOWER_RATE
        self.gate = ThrottleGate()
        self._index = -1
        self._state: MetadataState | None = None
        self._cache: dict[tuple[str, int, int], bool] = {}

    def refresh(self, state: MetadataState, now_ms: int) -> bool:
        """Follow the rate in force; True when one is set (else nothing is throttled)."""
        if state.last_applied_index != self._index or state is not self._state:
            self._index, self._state = state.last_applied_index, state
            self._cache.clear()
            self.gate.follow(
                broker_rate(state.broker_configs, self._node_id, self._rate_key), now_ms
            )
        return self.gate.bucket is not None

    def covers(self, state: MetadataState, topic: str, partition: int, follower_id: int) -> bool:
        """Whether the copy to ``follower_id`` of this partition is throttled (call
        :meth:`refresh` first)."""
        key = (topic, partition, follower_id)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._decide(state, topic, partition, follower_id)
        return hit

    def _decide(self, state: MetadataState, topic: str, partition: int, follower_id: int) -> bool:
        topic_id = state.topic_ids.get(topic)
        t = state.topics.get(topic_id) if topic_id is not None else None
        if t is None or not is_throttled(t.configs, self._list_key, partition, self._node_id):
            return False
        s = state.partitions.get((t.topic_id, partition))
        return s is not None and follower_id not in s.isr
