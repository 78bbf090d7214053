"""A broker's middle layer without a node: real replicas on real files, a metadata view,
and a clock that follows trio's (so tests run under ``trio.testing.MockClock``).

Why: the request handlers, the ISR manager and the flush task decide on time (long polls,
acks=all timeouts, lag windows, flush ages). Under an autojumping MockClock with this clock,
a test waits out a 10 s lag window in no real time, and repeats exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import trio

from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.cluster.metadata_view import MetadataView
from rillet.broker.config import NodeConfig
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.broker.replica.replica_role import ReplicaRole, TopicPartitionKey
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.raft.quorum import Entry, Snapshot

EPOCH_MS = 1_700_000_000_000
NODE_ID = 1
TEST_SECRET = "a-test-cluster-secret"  # any non-empty secret: no key derives from ""


class TrioClock:
    """The broker's :class:`~rillet.broker.runtime.clock.Clock` read from trio's clock: wall time
    is ``epoch_ms`` plus trio's time, so it jumps with a MockClock."""

    def __init__(self, epoch_ms: int = EPOCH_MS) -> None:
        self.epoch_ms = epoch_ms

    def now_ms(self) -> int:
        return self.epoch_ms + int(trio.current_time() * 1000)

    def monotonic_s(self) -> float:
        return trio.current_time()

    def steady_ms(self) -> int:
        return self.now_ms()


class EmptyMetadataLog:
    """A committed metadata log with nothing in it (the tests give replicas their roles)."""

    async def read_committed(self, after_index: int, max_entries: int = 1000) -> list[Entry]:
        await trio.sleep_forever()

    def save_snapshot(self, snapshot: Snapshot) -> None:
        pass

    def latest_snapshot(self) -> Snapshot | None:
        return None


@dataclass
class Middle:
    """A context for handlers and the replica manager it holds, on one clock."""

    ctx: BrokerContext
    replicas: ReplicaManager
    clock: TrioClock

    def host(
        self,
        topic: str,
        partition: int,
        leader: int = NODE_ID,
        isr: tuple[int, ...] = (NODE_ID, 2),
        replicas: tuple[int, ...] = (NODE_ID, 2),
        leader_epoch: int = 1,
        configs: dict[str, str] | None = None,
    ) -> PartitionReplica:
        """Open and host a partition replica in the role the arguments describe."""
        plog = self.replicas.open_log(topic, "tid-" + topic, partition, configs or {})
        role = ReplicaRole(
            leader == NODE_ID, leader_epoch, isr, NODE_ID, replicas, 1, leader_id=leader
        )
        key = TopicPartitionKey(topic, partition)
        return self.replicas.install(key, plog, "tid-" + topic, configs or {}, role)


def middle(data_dir: Path, config: NodeConfig | None = None) -> Middle:
    config = config or NodeConfig(node_id=NODE_ID, data_dir=data_dir)
    clock = TrioClock()
    manager = ReplicaManager(config, clock)
    view = MetadataView(
        NODE_ID, MetadataFollower(EmptyMetadataLog()), ClusterAuth(config.cluster_id, TEST_SECRET)
    )
    view.readiness.learn_committed(0)  # caught up: the tests give the state themselves
    return Middle(BrokerContext(config, manager, 0, view), manager, clock)
