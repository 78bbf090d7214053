"""The core's view of its log: what storage holds, plus an unstable tail not yet persisted.

Entries enter as *unstable* (appended by a leader's proposal or received from a leader),
are handed to the driver in a Ready, and become *stable* once the driver has persisted them
and called ``advance``. Reads look in the unstable tail first, then in storage: the tail
may already have replaced a conflicting suffix that storage still holds, and storage
catches up when the next Ready is persisted.

The commit index only ever grows; the applied index trails it and is what the driver has
applied. ``persisted_index`` is the end of the prefix known to be durable here, which is
the only part a leader may count toward a commit quorum for itself.
"""

from __future__ import annotations

from rillet.raft.core_errors import EntryUnavailable, InvariantViolation, LogCompacted
from rillet.raft.log_storage import LogStorage, limit_size
from rillet.raft.membership import ConfigHistory, Configuration
from rillet.raft.messages import EntryKind, LogEntry
from rillet.raft.quorum import Snapshot


class Unstable:
    """Entries (and possibly a snapshot from the leader) not yet persisted. ``offset`` is the
    index of ``entries[0]``; everything before it is in storage (or in the snapshot)."""

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.entries: list[LogEntry] = []
        self.snapshot: Snapshot | None = None

    def last_index(self) -> int | None:
        if self.entries:
            return self.offset + len(self.entries) - 1
        if self.snapshot is not None:
            return self.snapshot.index
        return None

    def term(self, index: int) -> int | None:
        if self.offset <= index < self.offset + len(self.entries):
            return self.entries[index - self.offset].term
        if self.snapshot is not None and index == self.snapshot.index:
            return self.snapshot.term
        return None

    def truncate_and_append(self, entries: list[LogEntry]) -> None:
        first = entries[0].index
        if first == self.offset + len(self.entries):
            self.entries.extend(entries)
        elif first <= self.offset:
            # Replaces everything unstable, and the persisted suffix from ``first`` on too:
            # lookups at or after the new offset no longer reach storage.
            self.offset = first
            self.entries = list(entries)
        else:
            self.entries = self.entries[: first - self.offset] + list(entries)

    def stable_to(self, index: int, term: int) -> None:
        """Entries up to ``index`` were persisted; forget them unless they were replaced
        (different term) after the Ready that carried them was taken."""
        if self.term(index) == term and index >= self.offset:
            self.entries = self.entries[index + 1 - self.offset :]
            self.offset = index + 1

    def restore(self, snapshot: Snapshot) -> None:
        self.offset = snapshot.index + 1
        self.entries = []
        self.snapshot = snapshot


class RaftLog:
    def __init__(
        self,
        storage: LogStorage,
        applied_index: int | None = None,
        bootstrap: Configuration | None = None,
    ) -> None:
        """``bootstrap`` is the configuration in effect before any configuration entry or
        snapshot (the static voters a cluster was formatted with)."""
        self.storage = storage
        self.unstable = Unstable(storage.last_index() + 1)
        snapshot_index = storage.snapshot().index
        # The stored commit index is advisory: if the entries it covers did not all survive
        # a crash, start lower and re-learn it from the leader (committed entries survive on
        # a quorum; this node's copy only matters once it acknowledges them again).
        commit = min(storage.hard_state().commit, storage.last_index())
        self.committed = max(commit, snapshot_index)
        applied = snapshot_index if applied_index is None else applied_index
        if not snapshot_index <= applied <= self.committed:
            raise InvariantViolation(
                f"applied index {applied} outside [{snapshot_index}, {self.committed}]"
            )
        self.applied = applied
        # Highest index handed to the driver for applying (>= applied until advance).
        self.applying = applied
        # A snapshot of applied state, taken locally, not yet persisted by the driver.
        self.pending_compaction: Snapshot | None = None
        snapshot = storage.snapshot()
        base = bootstrap or Configuration(())
        if snapshot.voters:
            base = Configuration.decode(snapshot.voters)
        self.configs = ConfigHistory(snapshot_index, base)
        if storage.last_index() > snapshot_index:
            stored = storage.entries(snapshot_index + 1, storage.last_index() + 1)
            self.configs.entries_appended(e for e in stored if e.kind is EntryKind.CONFIG)

    # -- configuration ------------------------------------------------------------------

    def configuration(self) -> Configuration:
        """The voter set in effect: the latest configuration entry, committed or not."""
        return self.configs.latest()

    def configuration_index(self) -> int:
        """Index of the entry (or snapshot) that set the configuration in effect."""
        return self.configs.latest_index()

    # -- positions ----------------------------------------------------------------------

    def first_index(self) -> int:
        if self.unstable.snapshot is not None:
            return self.unstable.snapshot.index + 1
        return self.storage.first_index()

    def last_index(self) -> int:
        unstable_last = self.unstable.last_index()
        return self.storage.last_index() if unstable_last is None else unstable_last

    def last_term(self) -> int:
        term = self.term(self.last_index())
        if term is None:
            raise InvariantViolation("the last entry has no term")
        return term

    def persisted_index(self) -> int:
        """Last index of the prefix the driver has made durable (0 while a received
        snapshot is still unpersisted: nothing of the new log is durable yet)."""
        if self.unstable.snapshot is not None:
            return 0
        return self.unstable.offset - 1

    def term(self, index: int) -> int | None:
        """The entry's term, or None when it is compacted away or beyond the end."""
        unstable_term = self.unstable.term(index)
        if unstable_term is not None:
            return unstable_term
        if index < self.first_index() - 1 or index > self.last_index():
            return None
        if index >= self.unstable.offset:
            return None
        try:
            return self.storage.term(index)
        except (LogCompacted, EntryUnavailable):
            return None

    def match_term(self, index: int, term: int) -> bool:
        return self.term(index) == term

    def is_up_to_date(self, last_index: int, last_term: int) -> bool:
        """Raft's vote restriction: is a log ending at (last_index, last_term) at least as
        up to date as ours? Later last term wins; equal terms compare length."""
        ours = self.last_term()
        return last_term > ours or (last_term == ours and last_index >= self.last_index())

    # -- reading entries ----------------------------------------------------------------

    def slice(self, lo: int, hi: int, max_bytes: int | None = None) -> list[LogEntry]:
        """Entries lo <= index < hi. Raises LogCompacted below first_index()."""
        if lo < self.first_index():
            raise LogCompacted(lo, self.first_index())
        if hi > self.last_index() + 1:
            raise EntryUnavailable(hi - 1, self.last_index())
        if lo >= hi:
            return []
        offset = self.unstable.offset
        result: list[LogEntry] = []
        if lo < offset:
            result = self.storage.entries(lo, min(hi, offset), max_bytes)
            if len(result) < min(hi, offset) - lo:
                return result  # size limit reached inside storage
        if hi > offset:
            start = max(lo, offset) - offset
            result = result + self.unstable.entries[start : hi - offset]
        return limit_size(result, max_bytes)

    def entries_from(
        self, lo: int, max_count: int, max_bytes: int | None = None
    ) -> list[LogEntry] | None:
        """Up to ``max_count`` entries from ``lo``; None when ``lo`` was compacted away."""
        if lo < self.first_index():
            return None
        hi = min(self.last_index() + 1, lo + max_count)
        return self.slice(lo, hi, max_bytes) if lo < hi else []

    def snapshot(self) -> Snapshot:
        """The newest snapshot known here (received, taken locally, or in storage)."""
        if self.unstable.snapshot is not None:
            return self.unstable.snapshot
        if self.pending_compaction is not None:
            return self.pending_compaction
        return self.storage.snapshot()

    # -- appending ----------------------------------------------------------------------

    def append(self, entries: list[LogEntry]) -> int:
        if entries:
            if entries[0].index - 1 < self.committed:
                raise InvariantViolation(
                    f"append at {entries[0].index} would overwrite committed {self.committed}"
                )
            self.unstable.truncate_and_append(entries)
            self.configs.truncate_from(entries[0].index)
            self.configs.entries_appended(e for e in entries if e.kind is EntryKind.CONFIG)
        return self.last_index()

    def find_conflict(self, entries: tuple[LogEntry, ...]) -> int:
        """Index of the first entry that is new or differs in term from ours (0: none)."""
        for entry in entries:
            if not self.match_term(entry.index, entry.term):
                return entry.index
        return 0

    def maybe_append(
        self, prev_index: int, prev_term: int, commit: int, entries: tuple[LogEntry, ...]
    ) -> int | None:
        """A follower's AppendEntries: if our log holds (prev_index, prev_term), append the
        entries (replacing a conflicting suffix, keeping a matching one: a stale, shorter
        message must never truncate entries a newer message added) and advance the commit
        index. Returns the last index now known to match the leader, None on a mismatch."""
        if not self.match_term(prev_index, prev_term):
            return None
        last_new_index = prev_index + len(entries)
        conflict = self.find_conflict(entries)
        if conflict:
            if conflict <= self.committed:
                raise InvariantViolation(f"entry {conflict} conflicts with the committed prefix")
            self.append(list(entries[conflict - prev_index - 1 :]))
        self.commit_to(min(commit, last_new_index))
        return last_new_index

    def find_conflict_by_term(self, index: int, term: int) -> tuple[int, int]:
        """The largest (i, term_i) with i <= index and term_i <= term: where our log could
        still agree with a log whose entry at ``index`` has ``term``. Used on both sides of
        the fast backtracking of rejected appends. (index, 0) when terms are unknown."""
        while index > 0:
            ours = self.term(index)
            if ours is None:
                return index, 0
            if ours <= term:
                return index, ours
            index -= 1
        return 0, 0

    # -- commit, apply, persist -------------------------------------------------------------

    def commit_to(self, index: int) -> None:
        if index > self.committed:
            if index > self.last_index():
                raise InvariantViolation(f"commit {index} beyond last index {self.last_index()}")
            self.committed = index

    def has_entries_to_apply(self) -> bool:
        return self.committed > self.applying

    def entries_to_apply(self, max_bytes: int | None) -> list[LogEntry]:
        lo = max(self.applying + 1, self.first_index())
        if lo > self.committed:
            return []
        return self.slice(lo, self.committed + 1, max_bytes)

    def applied_to(self, index: int) -> None:
        self.applied = max(self.applied, index)
        self.applying = max(self.applying, self.applied)

    def stable_to(self, index: int, term: int) -> None:
        self.unstable.stable_to(index, term)

    def stable_snapshot_to(self, index: int) -> None:
        if self.unstable.snapshot is not None and self.unstable.snapshot.index == index:
            self.unstable.snapshot = None

    def restore(self, snapshot: Snapshot) -> None:
        """Replace the whole log with a snapshot received from the leader."""
        self.committed = snapshot.index
        self.unstable.restore(snapshot)
        voters = Configuration.decode(snapshot.voters) if snapshot.voters else self.configuration()
        self.configs.reset(snapshot.index, voters)
