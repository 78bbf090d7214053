"""One partition hosted on this node: its log, its high watermark and who waits on them.

The high watermark is the end of what consumers may see. With replication (DESIGN §6) it is
the smallest log end offset over the ISR; on a single node it is the end of what the flush
policy has made durable: the log end offset when the policy relies on the page cache (the
default, like Kafka), or the fsynced end when ``flush_messages`` / ``flush_ms`` are set. Only
records below it are ever returned to consumers, and acks=all waits for it.

Waiters are trio events: a long-polling fetch registers one event with every partition it
reads, and any high-watermark advance sets them all, so one wake-up serves many partitions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import trio

from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import AppendResult, PartitionLog
from rillet.wire.frame import FileRegion


@dataclass(frozen=True, slots=True)
class ReplicaRole:
    """What the committed metadata says about this replica: leader or follower, in which
    leader epoch, and the partition's in-sync replica set."""

    is_leader: bool
    leader_epoch: int
    isr: tuple[int, ...]
    node_id: int

    @property
    def sole_in_sync_replica(self) -> bool:
        return self.isr == (self.node_id,)


@dataclass(frozen=True, slots=True)
class TopicPartitionKey:
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


class PartitionReplica:
    """Driver-side state of one local partition replica.

    Until follower replication lands (DESIGN §6), the high watermark advances on append only
    when this replica is the partition's sole in-sync replica: a partition whose ISR names
    other brokers waits for them, so nothing is reported committed that only one broker has.
    """

    def __init__(
        self,
        key: TopicPartitionKey,
        log: PartitionLog,
        request_flush: Callable[[], None],
        leader_epoch: int = 0,
        topic_id: str = "",
    ) -> None:
        self.key = key
        self.log = log
        self.topic_id = topic_id
        self.leader_epoch = leader_epoch
        self.is_leader = True
        self._sole_in_sync = True
        self._flush_driven = log.config.flush_messages > 0 or log.config.flush_ms > 0
        # Everything recovered from disk is committed: a single replica has no one to disagree.
        self._high_watermark = log.log_end_offset
        self._waiters: set[trio.Event] = set()
        self._hw_waiters: list[tuple[int, trio.Event]] = []
        self._request_flush = request_flush
        self.flush_requested = False
        self.deleted = False

    def set_role(self, role: ReplicaRole) -> None:
        """Apply the committed leadership of this partition (called on every change)."""
        was_leader = self.is_leader
        self.is_leader = role.is_leader
        self.leader_epoch = role.leader_epoch
        self._sole_in_sync = role.sole_in_sync_replica
        if was_leader and not role.is_leader:
            self.wake_all()  # long polls on a deposed leader answer NOT_LEADER promptly

    @property
    def config(self) -> LogConfig:
        return self.log.config

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    def append_as_leader(
        self, records: bytes | bytearray | memoryview | FileRegion, now_ms: int
    ) -> AppendResult:
        if isinstance(records, FileRegion):
            raise TypeError("produced records arrive as bytes, never as a file region")
        result = self.log.append_as_leader(records, self.leader_epoch, now_ms)
        if self._flush_driven:
            if self.log.needs_flush(now_ms):
                self.flush_requested = True
                self._request_flush()
        elif self._sole_in_sync:
            self._advance_high_watermark(self.log.log_end_offset)
        return result

    def on_flushed(self) -> None:
        """Called by the flush task after ``flush_completed``; exposes what is durable."""
        if self._flush_driven and self._sole_in_sync:
            self._advance_high_watermark(self.log.recovery_point)

    def _advance_high_watermark(self, offset: int) -> None:
        if offset <= self._high_watermark:
            return
        self._high_watermark = offset
        self.wake_all()
        if self._hw_waiters:
            still = []
            for target, event in self._hw_waiters:
                if offset >= target:
                    event.set()
                else:
                    still.append((target, event))
            self._hw_waiters = still

    def wake_all(self) -> None:
        """Wake every long-polling fetch on this partition (new data, deletion, shutdown)."""
        for event in self._waiters:
            event.set()
        self._waiters.clear()

    def mark_deleted(self) -> None:
        """The partition is being deleted: release every waiter so none hangs on it."""
        self.deleted = True
        self.wake_all()
        for _, event in self._hw_waiters:
            event.set()
        self._hw_waiters.clear()

    def register_waiter(self, event: trio.Event) -> None:
        self._waiters.add(event)

    def unregister_waiter(self, event: trio.Event) -> None:
        self._waiters.discard(event)

    async def wait_for_high_watermark(self, offset: int) -> None:
        """Return once the high watermark is at least ``offset`` (acks=all)."""
        if self._high_watermark >= offset:
            return
        event = trio.Event()
        entry = (offset, event)
        self._hw_waiters.append(entry)
        try:
            await event.wait()
        finally:
            if not event.is_set() and entry in self._hw_waiters:
                self._hw_waiters.remove(entry)
