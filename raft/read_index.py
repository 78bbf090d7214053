"""ReadIndex: linearizable reads without writing to the log.

A leader may serve a read at its commit index only once it knows it is still the leader: a
deposed leader that has not heard of its successor would otherwise answer from a stale
state. So each read records the commit index at arrival, the leader sends a heartbeat round
tagged with a fresh ``read_id``, and when a quorum (counting itself) has answered that round
the read is released: the requester may serve it once it has applied up to the recorded
index. A quorum's answer to a later round also confirms every earlier pending read, so the
queue is released in order up to the acknowledged id.

The leader additionally waits until it has committed an entry of its own term before taking
reads: before that its commit index may be behind what the previous leader committed.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ReadState:
    """A released read: serve ``context`` once the applied index reaches ``index``."""

    index: int
    context: bytes


@dataclass(slots=True)
class PendingRead:
    read_id: int
    index: int
    requester: int
    context: bytes
    acks: set[int] = field(default_factory=set)


class ReadIndexQueue:
    """The leader's pending reads, in arrival order, keyed by the id of their heartbeat round."""

    def __init__(self) -> None:
        self._pending: deque[PendingRead] = deque()
        self._by_id: dict[int, PendingRead] = {}
        self._next_read_id = 1

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, index: int, requester: int, context: bytes, self_id: int) -> PendingRead:
        read = PendingRead(self._next_read_id, index, requester, context, {self_id})
        self._next_read_id += 1
        self._pending.append(read)
        self._by_id[read.read_id] = read
        return read

    def acknowledge(self, read_id: int, replica: int) -> set[int]:
        """Record ``replica``'s answer to round ``read_id``; returns who has answered (the
        caller counts the voters among them)."""
        read = self._by_id.get(read_id)
        if read is None:
            return set()
        read.acks.add(replica)
        return read.acks

    def release_through(self, read_id: int) -> list[PendingRead]:
        """Remove and return every read up to and including round ``read_id``."""
        if read_id not in self._by_id:
            return []
        released: list[PendingRead] = []
        while self._pending:
            read = self._pending.popleft()
            del self._by_id[read.read_id]
            released.append(read)
            if read.read_id == read_id:
                break
        return released

    def clear(self) -> None:
        """Forget pending reads (on losing leadership: their requesters retry elsewhere)."""
        self._pending.clear()
        self._by_id.clear()
