"""The committed entries a replica hands to its readers, from the latest snapshot on.

Why apart from the driver: what a reader gets is a pure function of what was applied and
which snapshot trimmed it: entries after ``after_index`` in order, or "restore the snapshot
first" when the reader is behind the trim. Keeping that here (no trio, no clock) leaves the
driver with the waiting only, and lets the rules be tested without a quorum.

Only NORMAL entries are kept: a leader's no-op or a configuration entry takes an index but
is never a reader's business, so the applied index readers see never points at one (a state
machine waiting to have applied it would wait forever).
"""

from __future__ import annotations

import bisect

from rillet.raft.errors import SnapshotRequired
from rillet.raft.quorum import Entry, Snapshot


def _entry_index(entry: Entry) -> int:
    return entry.index


class CommittedEntries:
    """Applied entries after the latest snapshot, and that snapshot."""

    def __init__(self, snapshot: Snapshot) -> None:
        """``snapshot``: the one on disk at start (index 0: none)."""
        self.snapshot: Snapshot | None = snapshot if snapshot.index > 0 else None
        self._trimmed_through = snapshot.index
        self._entries: list[Entry] = []  # in index order
        self.applied_index = snapshot.index  # the last NORMAL entry applied (or the snapshot)

    def applied(self, entry: Entry) -> None:
        """A NORMAL entry committed and applied, in order."""
        self.applied_index = entry.index
        self._entries.append(entry)

    def installed(self, snapshot: Snapshot) -> None:
        """A snapshot from the leader replaced everything applied here."""
        self.snapshot = snapshot
        self._trimmed_through = snapshot.index
        self._entries = []
        self.applied_index = max(self.applied_index, snapshot.index)

    def compacted(self, snapshot: Snapshot) -> None:
        """The state machine's own snapshot: entries up to it are dropped; readers behind it
        restore from it."""
        self.snapshot = snapshot
        self._trimmed_through = snapshot.index
        start = bisect.bisect_right(self._entries, snapshot.index, key=_entry_index)
        self._entries = self._entries[start:]

    def after(self, after_index: int, max_entries: int) -> list[Entry]:
        """Up to ``max_entries`` entries after ``after_index`` (empty: none yet). Raises
        SnapshotRequired when some of them were trimmed into the snapshot."""
        if after_index < self._trimmed_through:
            raise SnapshotRequired(self._trimmed_through)
        start = bisect.bisect_right(self._entries, after_index, key=_entry_index)
        return self._entries[start : start + max_entries]
