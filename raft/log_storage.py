"""What the core reads from durable storage, and an in-memory implementation of it.

The core never writes storage: it hands the driver a Ready (entries, hard state, snapshot)
and the driver persists it and then calls ``advance``. The core only reads through
``LogStorage``, so the same core runs on ``MemoryStorage`` in tests and the simulator and on
the fsynced segmented log in production.

Index conventions (as in the Raft paper and etcd-raft): indexes start at 1; the snapshot
covers every index up to ``snapshot().index``; ``first_index()`` is the first entry still
held (snapshot index + 1); ``term(first_index() - 1)`` is the snapshot's term, so the entry
just before the log can still be matched against a leader's prev_index.
"""

from __future__ import annotations

from typing import Protocol

from rillet.raft.core_errors import CoreContractError, EntryUnavailable, LogCompacted
from rillet.raft.messages import HardState, LogEntry
from rillet.raft.quorum import Snapshot

EMPTY_SNAPSHOT = Snapshot(index=0, term=0, data=b"")


class LogStorage(Protocol):
    """Read side of a member's durable state. Implementations must only ever show state
    that the driver has persisted, and must be consistent between calls of one step."""

    def hard_state(self) -> HardState: ...

    def snapshot(self) -> Snapshot:
        """The newest snapshot, or EMPTY_SNAPSHOT (index 0) when there is none."""
        ...

    def first_index(self) -> int: ...

    def last_index(self) -> int:
        """Index of the last entry, or the snapshot index when no entry follows it."""
        ...

    def term(self, index: int) -> int:
        """Term of the entry at ``index``, for first_index() - 1 <= index <= last_index().

        Raises LogCompacted below that range and EntryUnavailable above it."""
        ...

    def entries(self, lo: int, hi: int, max_bytes: int | None = None) -> list[LogEntry]:
        """Entries with lo <= index < hi; with ``max_bytes``, stop before the entry that
        would exceed it, but always return at least one entry when the range is not empty.

        Raises LogCompacted when lo < first_index() and EntryUnavailable when hi exceeds
        last_index() + 1."""
        ...


def limit_size(entries: list[LogEntry], max_bytes: int | None) -> list[LogEntry]:
    """The longest prefix within ``max_bytes`` (at least one entry, so progress is made)."""
    if max_bytes is None or not entries:
        return entries
    total_bytes = 0
    for count, entry in enumerate(entries):
        total_bytes += entry.size_bytes()
        if total_bytes > max_bytes and count > 0:
            return entries[:count]
    return entries


class MemoryStorage:
    """A ``LogStorage`` in memory, plus the write operations a driver performs on Ready."""

    def __init__(self) -> None:
        self._hard_state = HardState()
        self._snapshot = EMPTY_SNAPSHOT
        self._entries: list[LogEntry] = []  # the entries after the snapshot, in order

    # -- reads --------------------------------------------------------------------------

    def hard_state(self) -> HardState:
        return self._hard_state

    def snapshot(self) -> Snapshot:
        return self._snapshot

    def first_index(self) -> int:
        return self._snapshot.index + 1

    def last_index(self) -> int:
        return self._snapshot.index + len(self._entries)

    def term(self, index: int) -> int:
        offset = self._snapshot.index
        if index < offset:
            raise LogCompacted(index, offset + 1)
        if index > self.last_index():
            raise EntryUnavailable(index, self.last_index())
        if index == offset:
            return self._snapshot.term
        return self._entries[index - offset - 1].term

    def entries(self, lo: int, hi: int, max_bytes: int | None = None) -> list[LogEntry]:
        offset = self._snapshot.index
        if lo <= offset:
            raise LogCompacted(lo, offset + 1)
        if hi > self.last_index() + 1:
            raise EntryUnavailable(hi - 1, self.last_index())
        return limit_size(self._entries[lo - offset - 1 : hi - offset - 1], max_bytes)

    # -- writes (the driver's side of Ready) ----------------------------------------------

    def set_hard_state(self, hard_state: HardState) -> None:
        self._hard_state = hard_state

    def append(self, entries: list[LogEntry] | tuple[LogEntry, ...]) -> None:
        """Append ``entries``, first discarding every held entry at or after the first new
        index (a Ready's entries replace a conflicting suffix). Entries at or below the
        snapshot index are skipped: they are already covered."""
        if not entries:
            return
        offset = self._snapshot.index
        first = entries[0].index
        if first > self.last_index() + 1:
            raise CoreContractError(f"append at {first} leaves a gap after {self.last_index()}")
        skip = max(0, offset + 1 - first)
        kept = self._entries[: max(0, first - offset - 1)]
        kept.extend(entries[skip:])
        self._entries = kept

    def apply_snapshot(self, snapshot: Snapshot) -> None:
        """Install ``snapshot`` and drop the entries it covers. Entries after it survive only
        when the log agrees with the snapshot at its index (a local compaction); otherwise
        (a snapshot from the leader over a diverged or short log) the log is emptied."""
        if snapshot.index < self._snapshot.index:
            raise CoreContractError(
                f"snapshot {snapshot.index} is older than the stored {self._snapshot.index}"
            )
        matches = (
            self._snapshot.index <= snapshot.index <= self.last_index()
            and self.term(snapshot.index) == snapshot.term
        )
        self._entries = self._entries[snapshot.index - self._snapshot.index :] if matches else []
        self._snapshot = snapshot

    def copy(self) -> MemoryStorage:
        """An independent copy (the simulated disk keeps one per sync point)."""
        clone = MemoryStorage()
        clone._hard_state = self._hard_state
        clone._snapshot = self._snapshot
        clone._entries = list(self._entries)
        return clone
