"""What one follower fetch loop last asked for each partition it follows, kept between rounds.

A node following 3,000 partitions of a leader used to recompute every one's fetch position
before every fetch: its log end, leader epoch, latest epoch and log start, and a record of
what the fetch asked (the answer applies only if that still holds). That was 30 ms of event
loop per round on a quiet machine, and hundreds under load, although between two rounds the
positions that can move are few: a position moves when this loop applies an answer to the
partition, or when something else changes the replica (a role or epoch change, a deletion, a
repair's truncation), and each of those goes through a reconciliation of the fetchers.

So a loop keeps the positions, recomputes only those of partitions it applied an answer to
(or was told to look at again) since its last fetch, and recomputes them all after every
reconciliation and at least every ``FULL_ROUND_MS`` (a local change that goes through none of
these, such as local retention moving the log start, reaches the leader within that).
Pure state: the fetcher drives it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.wire.messages import FetchPartition

TP = tuple[str, int]

# The longest a position is kept without being recomputed.
FULL_ROUND_MS = 1_000


class SentPosition(NamedTuple):
    """What a fetch asked for a partition: the answer applies only if this still holds."""

    replica: PartitionReplica
    fetch_offset: int
    leader_epoch: int
    log_truncations: int


class FollowedPositions:
    """The partitions of one loop's leader, each with its last computed position."""

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._generation: int | None = None  # the fetchers' reconciliation it was built at
        self._built_ms = 0
        self.positions: dict[TP, FetchPartition] = {}
        self.sent: dict[TP, SentPosition] = {}
        self._moved: set[TP] = set()
        self._full = True  # the next take_moved() is a full round

    def needs_rebuild(self, generation: int, now_ms: int) -> bool:
        """After a reconciliation, or when the last full round is ``FULL_ROUND_MS`` old."""
        return generation != self._generation or now_ms - self._built_ms >= FULL_ROUND_MS

    def rebuild(self, replicas: list[PartitionReplica], generation: int, now_ms: int) -> None:
        """Recompute every position, for exactly ``replicas``."""
        for _ in self.rebuild_steps(replicas, generation, now_ms):
            pass

    def rebuild_steps(
        self, replicas: list[PartitionReplica], generation: int, now_ms: int
    ) -> Iterator[None]:
        """:meth:`rebuild`, one partition per step: the driver may let other tasks run
        between steps (thousands of positions took tens of milliseconds). A position
        computed before a yield may be stale when sent; its answer is then dropped as for
        any answer to a fetch sent before a change."""
        self.positions, self.sent = {}, {}
        self._moved.clear()
        for replica in replicas:
            self._compute(replica)
            yield
        self._generation, self._built_ms, self._full = generation, now_ms, True

    def invalidate(self) -> None:
        """Rebuild before the next fetch (a followed replica turned out damaged)."""
        self._generation = None

    def mark_moved(self, key: TP) -> None:
        """This partition's position may have moved (an answer was applied to it)."""
        self._moved.add(key)

    def take_moved(self) -> list[TP] | None:
        """Recompute the positions that may have moved since the last fetch and return
        their keys, or None after a rebuild (every position is new: compare them all)."""
        moved = self.take_moved_keys()
        for key in moved or ():
            self.recompute(key)
        return moved

    def take_moved_keys(self) -> list[TP] | None:
        """The positions that may have moved since the last fetch, each to
        :meth:`recompute` before the fetch is built; None after a rebuild."""
        if self._full:
            self._full = False
            self._moved.clear()
            return None
        moved = [key for key in self._moved if key in self.sent]
        self._moved.clear()
        return moved

    def recompute(self, key: TP) -> None:
        self._compute(self.sent[key].replica)

    def _compute(self, replica: PartitionReplica) -> None:
        part = replica.fetch_partition(self._max_bytes)
        key = (part.topic, part.partition)
        self.positions[key] = part
        self.sent[key] = SentPosition(
            replica, part.fetch_offset, part.current_leader_epoch, replica.log.truncations
        )

    def __len__(self) -> int:
        return len(self.sent)
