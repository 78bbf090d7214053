"""Makes the partitions this node hosts match the committed metadata.

For every partition whose replica list names this node, the local log is opened (created if
new) and given the committed role: leader or follower, leader epoch, ISR. Partitions no
longer assigned here (topic deleted, replicas moved) are closed and their data removed. It
starts only once the broker has caught up with the metadata as of its registration, so a
node restarting with stale metadata never deletes a partition that still exists.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import trio

from rillet.broker.partition_replica import ReplicaRole, TopicPartitionKey
from rillet.broker.replica_manager import ReplicaManager
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.state import MetadataState, PartitionState, TopicState

log = logging.getLogger(__name__)


class PartitionReconciler:
    def __init__(self, node_id: int, replicas: ReplicaManager, follower: MetadataFollower) -> None:
        self._node_id = node_id
        self._replicas = replicas
        self._follower = follower
        self.reconciled_index = 0
        self._changed = trio.Event()
        self._listeners: list[Callable[[], None]] = []

    def on_reconciled(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after every pass (the replica fetchers follow leader moves)."""
        self._listeners.append(listener)

    async def run(self, caught_up: trio.Event) -> None:
        await caught_up.wait()
        self.reconcile(self._follower.state)
        removed = self._replicas.remove_unassigned_dirs()
        if removed:
            log.info("removed %d partition directories no longer assigned here", removed)
        while True:
            await self._follower.wait_applied(self.reconciled_index + 1)
            self.reconcile(self._follower.state)

    async def wait_reconciled(self, index: int) -> None:
        while self.reconciled_index < index:
            await self._changed.wait()

    def reconcile(self, state: MetadataState) -> None:
        wanted: dict[TopicPartitionKey, tuple[TopicState, PartitionState]] = {}
        for (topic_id, partition), p in state.partitions.items():
            topic = state.topics.get(topic_id)
            if topic is not None and self._node_id in p.replicas:
                wanted[TopicPartitionKey(topic.name, partition)] = (topic, p)
        for key in sorted(self._replicas.hosted() - set(wanted), key=str):
            log.info("no longer hosting %s: removing it", key)
            self._replicas.remove_replica(key.topic, key.partition)
        for key, (topic, p) in sorted(wanted.items(), key=lambda kv: str(kv[0])):
            role = ReplicaRole(
                is_leader=p.leader == self._node_id,
                leader_epoch=p.leader_epoch,
                isr=p.isr,
                node_id=self._node_id,
                replicas=p.replicas,
                partition_epoch=p.partition_epoch,
                leader_id=p.leader,
            )
            try:
                self._replicas.ensure_replica(
                    topic.name, topic.topic_id, key.partition, topic.configs, role
                )
            except OSError:
                log.exception("cannot open %s", key)
        self.reconciled_index = state.last_applied_index
        for listener in self._listeners:
            listener()
        self._changed.set()
        self._changed = trio.Event()
