"""What the metadata follower does with what it reads, without reading it.

Why a core of its own: :class:`~rillet.metadata_quorum.follower.MetadataFollower` reads the
committed log from a voter's quorum (or a broker's remote view of it) and yields to the
event loop while it applies a long run of entries; the replication simulation (tests)
applies what its scheduled metadata fetches return. Both run this object, so where the next
read starts, how entries are applied (in order, each an atomic batch of records), when a
snapshot is handed to the log for compaction and how one is restored are decided in one
place. It touches no task or clock.
"""

from __future__ import annotations

from collections.abc import Sequence

from rillet.metadata_quorum.records import decode_entry
from rillet.metadata_quorum.state import MetadataState
from rillet.raft.quorum import Entry, Snapshot


class FollowerProgress:
    """The state the follower builds, and its count towards the next snapshot."""

    def __init__(self, snapshot_every: int = 10_000) -> None:
        self.state = MetadataState()
        self._snapshot_every = snapshot_every
        self._since_snapshot = 0

    def read_after(self) -> int:
        """The index the next read starts after: the last one applied."""
        return self.state.last_applied_index

    def apply(self, entry: Entry) -> None:
        """Apply one committed entry (the next in order)."""
        self.state.apply_entry(entry.index, decode_entry(entry.data))

    def applied(self, entries: Sequence[Entry]) -> Snapshot | None:
        """A read's entries are applied: the snapshot to hand to the log, every
        ``snapshot_every`` entries (not records), else None."""
        self._since_snapshot += len(entries)
        if self._since_snapshot < self._snapshot_every:
            return None
        self._since_snapshot = 0
        return Snapshot(self.state.last_applied_index, entries[-1].term, self.state.to_snapshot())

    def restore(self, snapshot: Snapshot | None) -> None:
        """The entries after :meth:`read_after` were compacted: continue from the log's
        latest snapshot (a new state object)."""
        if snapshot is None:
            raise RuntimeError("entries were compacted but no snapshot is available")
        self.state = MetadataState.from_snapshot(snapshot.data)
        self._since_snapshot = 0
