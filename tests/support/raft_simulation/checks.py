"""Raft's safety properties, checked after every step of a simulated run.

* Election safety: at most one leader per term.
* Log matching: every (index, term) seen in any node's log has one payload and one
  predecessor term. Since every entry of every log passes through a Ready, this implies,
  by induction, that logs agreeing on (index, term) agree on everything before it.
* Committed entries are immutable: whenever a node's commit index advances, the entries it
  now counts as committed must equal what any node ever counted as committed there.
* Committed means safe: from the moment an entry is committed, no node lacking it may have
  a log that a quorum would vote for (a log at least as up to date as theirs); otherwise a
  later election could overwrite it. Checked when an entry is first seen committed and
  whenever a node writes entries, this catches unsafe commits (Figure 8, stale acks) and
  unsafe overwrites when they happen, not only after the unlucky election that follows.
* Leader completeness: a leader of term T holds every entry committed in a term before T
  (or a snapshot covering it). Checked when each leader takes office, including after all
  nodes crashed and lost their unsynced writes: a committed entry lost to a crash shows up
  here as a leader without it.
* State-machine safety: every node applies the same entry at each index (compared through
  a digest chain, which also validates snapshots).
* Linearizable reads: a read released by ReadIndex waits for an index at least as high as
  every index known committed when the read was issued.
* Configurations change one server at a time: every configuration entry written to any log
  differs from the configuration before it in that log by exactly one voter.
* The own-term rule: a leader appends a configuration entry only after it has committed an
  entry of its own term. (Breaking it is unsafe only in rare interleavings; the rule itself
  is checked, as the one-at-a-time rule is.)

With membership changes, "a quorum" is a majority of the voters of the configuration the
node lacking the entry holds (the one it would campaign under).

``commit_term`` records, for each committed index, the smallest term of a node seen holding
that commit: the entry was committed in that term or earlier, so every leader of a later
term must have it. Observing right after each step means the committing leader itself is
normally the first observer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from rillet.raft.core import RaftCore
from rillet.raft.membership import Configuration
from rillet.raft.messages import EntryKind, LogEntry
from rillet.raft.ready import Role


class SafetyViolation(AssertionError):
    """A Raft safety property does not hold."""


class LivenessFailure(AssertionError):
    """After healing, the cluster did not elect a leader and commit within the bound."""


class LogView(Protocol):
    """The part of a node's log the checker compares (RaftLog has it)."""

    def first_index(self) -> int: ...

    def last_index(self) -> int: ...

    def last_term(self) -> int: ...

    def term(self, index: int) -> int | None: ...

    def configuration(self) -> Configuration: ...


class SafetyChecker:
    def __init__(
        self,
        log_views: Callable[[], Iterable[tuple[int, LogView]]],
        directory_of: Callable[[int], str] = lambda node: "",
    ) -> None:
        """``log_views`` lists every node's current log (a down node's: what its disk will
        restart with); ``directory_of`` names each node's current directory id (a voter
        named under another one refuses to vote: its disk was replaced)."""
        self._log_views = log_views
        self._directory_of = directory_of
        self.leader_of_term: dict[int, int] = {}
        self._entries: dict[tuple[int, int], tuple[bytes, int, int]] = {}
        self.committed: dict[int, LogEntry] = {}
        self.commit_term: dict[int, int] = {}
        self.max_committed_index = 0
        self._seen_commit: dict[int, int] = {}
        self._checked_leaders: set[tuple[int, int]] = set()
        self.applied_digest: dict[int, bytes] = {}
        self.reads_checked = 0
        self.config_changes_committed = 0
        self.leader_self_removals = 0  # committed removals of the leader that wrote them

    # -- per step -----------------------------------------------------------------------

    def observe(self, node: int, core: RaftCore) -> None:
        """Call after anything happened on ``node``."""
        if core.role is Role.LEADER:
            known = self.leader_of_term.setdefault(core.term, node)
            if known != node:
                raise SafetyViolation(f"two leaders in term {core.term}: n{known} and n{node}")
            if (node, core.term) not in self._checked_leaders:
                self._checked_leaders.add((node, core.term))
                self._check_leader_completeness(node, core)
        self._observe_commit(node, core)

    def _observe_commit(self, node: int, core: RaftCore) -> None:
        log = core.raft_log
        seen = self._seen_commit.get(node, 0)
        if log.committed <= seen:
            return
        first = max(seen + 1, log.first_index())
        newest: LogEntry | None = None
        for entry in log.slice(first, log.committed + 1) if first <= log.committed else []:
            if entry.index not in self.committed:
                newest = entry
            known = self.committed.setdefault(entry.index, entry)
            if known != entry:
                raise SafetyViolation(
                    f"n{node} committed {_text(entry)} where {_text(known)} was committed"
                )
            if entry.index not in self.commit_term and entry.kind is EntryKind.CONFIG:
                self.config_changes_committed += 1
                writer = self.leader_of_term.get(entry.term)
                if writer not in Configuration.decode(entry.data).ids():
                    self.leader_self_removals += 1
            term = self.commit_term.get(entry.index)
            if term is None or core.term < term:
                self.commit_term[entry.index] = core.term
        self._seen_commit[node] = log.committed
        self.max_committed_index = max(self.max_committed_index, log.committed)
        if newest is not None:
            self._check_commit_is_safe(newest)

    def _check_commit_is_safe(self, entry: LogEntry) -> None:
        """Checking the newest entry covers the older ones: a log lacking an older entry
        lacks this one too (log matching)."""
        views = dict(self._log_views())
        tips = {n: (v.last_term(), v.last_index()) for n, v in views.items()}
        for node, view in views.items():
            if entry.index < view.first_index() or view.term(entry.index) == entry.term:
                continue  # holds it (or a snapshot covering it)
            configuration = view.configuration()
            voters = [
                v.node_id
                for v in configuration.voters
                if v.node_id in tips
                and v.matches(v.node_id, self._directory_of(v.node_id))
                and tips[v.node_id] <= tips[node]
            ]
            if len(voters) >= configuration.quorum_size():
                raise SafetyViolation(
                    f"committed {_text(entry)} is not safe: n{node} lacks it, yet its log "
                    f"(last {tips[node][1]}/t{tips[node][0]}) would win the votes of "
                    f"{', '.join(f'n{n}' for n in sorted(voters))}"
                )

    def _check_leader_completeness(self, node: int, core: RaftCore) -> None:
        log = core.raft_log
        covered_index = log.first_index() - 1  # held in the leader's snapshot
        for index, entry in self.committed.items():
            if self.commit_term[index] >= core.term or index <= covered_index:
                continue
            if log.term(index) != entry.term:
                raise SafetyViolation(
                    f"n{node} leads term {core.term} without committed {_text(entry)} "
                    f"(committed by term {self.commit_term[index]}; it has "
                    f"{'nothing' if log.term(index) is None else 't' + str(log.term(index))})"
                )

    def node_restarted(self, node: int, core: RaftCore) -> None:
        """A restarted node re-learns its commit index; start watching from what it has."""
        self._seen_commit[node] = core.raft_log.committed
        self._observe_commit_floor(node, core)

    def _observe_commit_floor(self, node: int, core: RaftCore) -> None:
        log = core.raft_log
        for index in range(log.first_index(), log.committed + 1):
            known = self.committed.get(index)
            if known is not None and log.term(index) != known.term:
                raise SafetyViolation(f"n{node} restarted without committed {_text(known)}")

    # -- log matching -------------------------------------------------------------------

    def on_entries_written(self, node: int, core: RaftCore, entries: tuple[LogEntry, ...]) -> None:
        log = core.raft_log
        for entry in entries:
            if entry.kind is EntryKind.CONFIG:
                self._check_configuration_entry(node, core, entry)
        prev_term = log.term(entries[0].index - 1) if entries else None
        for entry in entries:
            key = (entry.index, entry.term)
            value = (entry.data, int(entry.kind), -1 if prev_term is None else prev_term)
            known = self._entries.setdefault(key, value)
            if known[:2] != value[:2]:
                raise SafetyViolation(f"n{node} holds {_text(entry)} with another payload")
            if known[2] != value[2] and -1 not in (known[2], value[2]):
                raise SafetyViolation(
                    f"n{node}: entry {entry.index}/t{entry.term} follows term {value[2]}, "
                    f"elsewhere term {known[2]} (log matching)"
                )
            prev_term = entry.term
        if entries and self.max_committed_index:
            # A write may replace entries; the newest committed one must stay safe.
            self._check_commit_is_safe(self.committed[self.max_committed_index])

    def _check_configuration_entry(self, node: int, core: RaftCore, entry: LogEntry) -> None:
        log = core.raft_log
        before = log.configs.at(entry.index - 1)
        after = Configuration.decode(entry.data)
        # A node formatted to join knows no configuration until its first one arrives (the
        # bootstrap set is not written to the log): nothing to compare with.
        if before.voters and before.changed_servers(after) != 1:
            raise SafetyViolation(
                f"n{node}: configuration {before.describe()} -> {after.describe()} at "
                f"{entry.index} changes {before.changed_servers(after)} servers, not one"
            )
        own_term_committed = log.term(log.committed) == core.term
        if core.role is Role.LEADER and entry.term == core.term and not own_term_committed:
            raise SafetyViolation(
                f"n{node} appended configuration {after.describe()} at {entry.index} in "
                f"term {core.term} before committing an entry of that term"
            )

    # -- state machine ------------------------------------------------------------------

    def on_applied(self, node: int, index: int, digest: bytes) -> None:
        known = self.applied_digest.setdefault(index, digest)
        if known != digest:
            raise SafetyViolation(f"n{node} applied a different state at index {index}")

    def on_snapshot_restored(self, node: int, index: int, digest: bytes) -> None:
        known = self.applied_digest.get(index)
        if known is not None and known != digest:
            raise SafetyViolation(f"n{node} restored a snapshot at {index} that differs")

    def on_read_released(self, node: int, read_index: int, committed_at_issue: int) -> None:
        self.reads_checked += 1
        if read_index < committed_at_issue:
            raise SafetyViolation(
                f"n{node} released a read at index {read_index}, but {committed_at_issue} "
                "was already committed when the read was issued (stale read)"
            )

    # -- end of run ---------------------------------------------------------------------

    def check_final(self, node: int, core: RaftCore) -> None:
        """After recovery: the leader's log holds every entry ever committed."""
        log = core.raft_log
        if log.committed < self.max_committed_index:
            raise SafetyViolation(
                f"final leader n{node} commits {log.committed} < {self.max_committed_index}"
            )
        self._observe_commit_floor(node, core)


def _text(entry: LogEntry) -> str:
    return f"{entry.index}/t{entry.term}:{entry.data[:24]!r}"
