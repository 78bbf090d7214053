"""Makes the partitions this node hosts match the committed metadata.

For every partition whose replica list names this node, the local log is opened (created if
new) and given the committed role: leader or follower, leader epoch, ISR. Partitions no
longer assigned here (topic deleted, replicas moved) are closed and their data removed. It
starts only once the broker has caught up with the metadata as of its registration, so a
node restarting with stale metadata never deletes a partition that still exists.
"""

from __future__ import annotations

import logging

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
            role = ReplicaRole(p.leader == self._node_id, p.leader_epoch, p.isr, self._node_id)
            try:
                self._replicas.ensure_replica(
                    topic.name, topic.topic_id, key.partition, topic.configs, role
                )
            except OSError:
                log.exception("cannot open %s", key)
        self.reconciled_index = state.last_applied_index
        self._changed.set()
        self._changed = trio.Event()
