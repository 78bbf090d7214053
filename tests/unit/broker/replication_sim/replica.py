"""The replica of the partition on one broker: PartitionReplica's driver half around the
real :class:`LeaderState`.

Why a module of its own: this is where the role the metadata gives a broker turns into
leader state, the high watermark moves, and acks=all waiters are released; it is the seam
between the real replication core and the modelled broker around it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rillet.broker.replication.leader_state import LeaderState

from .in_flight import AcksWaiter
from .partition_log import Batch, SimLog

if TYPE_CHECKING:
    from .broker_process import BrokerProcess


@dataclass(frozen=True, slots=True)
class Role:
    """``ReplicaRole``: the committed state of the partition as this broker knows it."""

    is_leader: bool
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    partition_epoch: int
    leader_id: int


class ReplicaModel:
    """Mirrors broker/partition_replica.py with page-cache acks (local end = log end)."""

    def __init__(self, broker: BrokerProcess, log: SimLog, checkpoint: int) -> None:
        self.broker = broker
        self.log = log
        self.role: Role | None = None
        self.leader: LeaderState | None = None
        self.leader_epoch = 0
        self.high_watermark = min(checkpoint, log.log_end_offset)
        self.waiters: list[AcksWaiter] = []

    @property
    def is_leader(self) -> bool:
        return self.leader is not None

    def set_role(self, role: Role, now: int) -> None:
        previous = self.role
        self.role = role
        self.leader_epoch = role.leader_epoch
        if not role.is_leader:
            if self.leader is not None:
                self.leader = None
                self._release_waiters()
                self.broker.wake_parked_fetches()
            return
        if (
            self.leader is None
            or previous is None
            or previous.leader_epoch != role.leader_epoch
            or not previous.is_leader
        ):
            self.leader = LeaderState(
                node_id=self.broker.node_id,
                replicas=role.replicas or (self.broker.node_id,),
                isr=role.isr,
                leader_epoch=role.leader_epoch,
                partition_epoch=role.partition_epoch,
                high_watermark=self.high_watermark,
                epoch_start_offset=self.log.log_end_offset,
                now_ms=now,
            )
            self.log.start_leader_epoch(role.leader_epoch)
            self.broker.sim.checker.leadership_started(self.broker)
        else:
            self.leader.on_committed(role.isr, role.partition_epoch)
        self._leader_end_moved()

    def in_sync_count(self) -> int:
        return len(self.leader.isr) if self.leader is not None else 0

    def append_as_leader(self, count: int, payload: int) -> Batch:
        batch = self.log.append_as_leader(count, self.leader_epoch, payload)
        self.broker.wake_parked_fetches()
        self._leader_end_moved()
        return batch

    def on_follower_fetch(self, replica_id: int, fetch_offset: int, now: int) -> None:
        if self.leader is not None and self.leader.on_follower_fetch(
            replica_id, fetch_offset, self.log.log_end_offset, now
        ):
            self._high_watermark_moved(self.leader.high_watermark)

    def _leader_end_moved(self) -> None:
        if self.leader is not None:
            self.leader.update_high_watermark(self.log.log_end_offset)
            self._high_watermark_moved(self.leader.high_watermark)

    def follow_high_watermark(self, leader_high_watermark: int) -> None:
        self._high_watermark_moved(min(leader_high_watermark, self.log.log_end_offset))

    def after_truncation(self) -> None:
        self.high_watermark = min(self.high_watermark, self.log.log_end_offset)

    def _high_watermark_moved(self, offset: int) -> None:
        if offset <= self.high_watermark:
            return
        self.high_watermark = offset
        if self.waiters and self.is_leader:
            still = []
            for waiter in self.waiters:
                if offset >= waiter.target:
                    self.broker.acks_resolved(waiter, reached=True)
                else:
                    still.append(waiter)
            self.waiters = still

    def _release_waiters(self) -> None:
        waiters, self.waiters = self.waiters, []
        for waiter in waiters:
            self.broker.acks_resolved(waiter, reached=False)
