"""The log under the core: MemoryStorage, the unstable tail, matching and truncation, and
the leader's per-follower progress and quorum arithmetic."""

from __future__ import annotations

import pytest

from rillet.raft.core_config import Config
from rillet.raft.core_errors import (
    CoreContractError,
    EntryUnavailable,
    InvariantViolation,
    LogCompacted,
)
from rillet.raft.log_storage import MemoryStorage
from rillet.raft.messages import HardState, LogEntry
from rillet.raft.progress import Inflights, Progress, ProgressState, ProgressTracker, VoteResult
from rillet.raft.quorum import Snapshot
from rillet.raft.raft_log import RaftLog


def entries(*terms: int, start: int = 1) -> list[LogEntry]:
    return [LogEntry(start + i, term, b"e%d" % (start + i)) for i, term in enumerate(terms)]


def storage_with(*terms: int) -> MemoryStorage:
    storage = MemoryStorage()
    storage.append(entries(*terms))
    return storage


# -- MemoryStorage ---------------------------------------------------------------------


def test_storage_append_replaces_a_conflicting_suffix() -> None:
    storage = storage_with(1, 1, 1, 1)
    storage.append([LogEntry(3, 2, b"new")])
    assert storage.last_index() == 3
    assert [storage.term(i) for i in range(1, 4)] == [1, 1, 2]
    with pytest.raises(CoreContractError, match="gap"):
        storage.append([LogEntry(9, 2)])


def test_storage_bounds_are_typed_errors() -> None:
    storage = storage_with(1, 1, 2)
    storage.apply_snapshot(Snapshot(1, 1, b"s"))
    assert storage.first_index() == 2 and storage.term(1) == 1  # the snapshot's term
    with pytest.raises(LogCompacted):
        storage.term(0)
    with pytest.raises(LogCompacted):
        storage.entries(1, 3)
    with pytest.raises(EntryUnavailable):
        storage.term(4)
    with pytest.raises(EntryUnavailable):
        storage.entries(2, 5)


def test_storage_entries_respect_max_bytes_but_return_at_least_one() -> None:
    storage = MemoryStorage()
    storage.append([LogEntry(i, 1, b"x" * 100) for i in range(1, 6)])
    assert len(storage.entries(1, 6, max_bytes=250)) == 2
    assert len(storage.entries(1, 6, max_bytes=1)) == 1
    assert len(storage.entries(1, 6)) == 5


def test_local_compaction_keeps_later_entries_but_a_foreign_snapshot_replaces_the_log() -> None:
    storage = storage_with(1, 1, 2, 2)
    storage.apply_snapshot(Snapshot(2, 1, b"local"))
    assert (storage.first_index(), storage.last_index()) == (3, 4)
    other = storage_with(1, 1, 2, 2)
    other.apply_snapshot(Snapshot(3, 3, b"from a leader"))  # term differs at index 3
    assert (other.first_index(), other.last_index()) == (4, 3)
    assert other.term(3) == 3
    with pytest.raises(CoreContractError, match="older"):
        other.apply_snapshot(Snapshot(2, 1, b""))


def test_storage_copy_is_independent() -> None:
    storage = storage_with(1)
    clone = storage.copy()
    storage.append(entries(1, start=2))
    storage.set_hard_state(HardState(2, 1, 1))
    assert clone.last_index() == 1 and clone.hard_state() == HardState()


# -- RaftLog ---------------------------------------------------------------------------


def test_unstable_entries_shadow_storage_until_persisted() -> None:
    storage = storage_with(1, 1, 1)
    log = RaftLog(storage)
    log.append([LogEntry(2, 2, b"replacement")])
    assert log.last_index() == 2 and log.term(2) == 2 and log.term(3) is None
    assert log.persisted_index() == 1
    storage.append([LogEntry(2, 2, b"replacement")])
    log.stable_to(2, 2)
    assert log.persisted_index() == 2 and not log.unstable.entries


def test_stable_to_ignores_entries_replaced_after_the_ready_was_taken() -> None:
    log = RaftLog(MemoryStorage())
    log.append(entries(1, 1))
    log.append([LogEntry(2, 2)])  # replaced before the driver confirmed the first write
    log.stable_to(2, 1)
    assert log.unstable.entries == [LogEntry(1, 1, b"e1"), LogEntry(2, 2)]


def test_maybe_append_on_match_conflict_and_mismatch() -> None:
    log = RaftLog(storage_with(1, 1, 1, 1))
    assert log.maybe_append(5, 1, 0, ()) is None  # no entry 5: mismatch
    assert log.maybe_append(2, 2, 0, ()) is None  # wrong term: mismatch
    assert log.maybe_append(1, 1, 3, tuple(entries(1, 3, start=2))) == 3
    assert [log.term(i) for i in range(1, 5)] == [1, 1, 3, None]
    assert log.committed == 3


def test_a_stale_shorter_append_never_truncates_matching_entries() -> None:
    """pysyncobj truncates follower logs without a conflict; we must not."""
    log = RaftLog(storage_with(1, 1, 1, 1))
    assert log.maybe_append(1, 1, 0, tuple(entries(1, start=2))) == 2
    assert log.last_index() == 4 and not log.unstable.entries


def test_overwriting_a_committed_entry_is_an_invariant_violation() -> None:
    storage = storage_with(1, 1, 1)
    storage.set_hard_state(HardState(1, None, 2))
    log = RaftLog(storage)
    with pytest.raises(InvariantViolation):
        log.maybe_append(1, 1, 2, (LogEntry(2, 2),))


def test_find_conflict_by_term_skips_whole_terms() -> None:
    log = RaftLog(storage_with(1, 1, 2, 2, 2, 5, 5))
    assert log.find_conflict_by_term(7, 4) == (5, 2)
    assert log.find_conflict_by_term(7, 5) == (7, 5)
    assert log.find_conflict_by_term(4, 1) == (2, 1)
    assert log.find_conflict_by_term(3, 0) == (0, 0)


def test_up_to_date_compares_last_term_then_length() -> None:
    log = RaftLog(storage_with(1, 2, 2))
    assert log.is_up_to_date(3, 2) and log.is_up_to_date(1, 3)
    assert not log.is_up_to_date(2, 2) and not log.is_up_to_date(9, 1)


def test_restart_clamps_a_commit_index_beyond_the_surviving_log() -> None:
    storage = storage_with(1, 1)
    storage.set_hard_state(HardState(1, 1, 5))  # written before entries 3..5 were lost
    log = RaftLog(storage)
    assert log.committed == 2


def test_a_snapshot_from_the_leader_replaces_the_log_until_persisted() -> None:
    log = RaftLog(storage_with(1, 1))
    log.restore(Snapshot(10, 3, b"s"))
    assert (log.first_index(), log.last_index(), log.term(10), log.committed) == (11, 10, 3, 10)
    assert log.persisted_index() == 0  # nothing of the new log is durable yet
    assert log.entries_from(5, 10) is None  # compacted
    log.stable_snapshot_to(10)
    assert log.persisted_index() == 10


def test_entries_to_apply_span_storage_and_unstable_tail() -> None:
    log = RaftLog(storage_with(1, 1))
    log.append(entries(2, 2, start=3))
    log.commit_to(4)
    assert [e.index for e in log.entries_to_apply(None)] == [1, 2, 3, 4]
    with pytest.raises(InvariantViolation):
        log.commit_to(9)


# -- progress --------------------------------------------------------------------------


def test_inflights_window_by_count_and_bytes() -> None:
    window = Inflights(max_messages=3, max_bytes=100)
    window.add(5, 40)
    window.add(7, 40)
    assert not window.full()
    window.add(9, 40)
    assert window.full()
    window.free_le(7)
    assert len(window) == 1 and window.total_bytes == 40 and not window.full()


def test_progress_ignores_stale_and_duplicate_answers() -> None:
    progress = Progress(next_index=10, max_inflight_messages=4, max_inflight_bytes=None)
    assert progress.maybe_update(6)
    assert not progress.maybe_update(6)  # duplicate
    assert not progress.maybe_update(4)  # reordered, older
    progress.become_replicate()
    progress.sent_entries(9, 10)
    assert progress.next_index == 10
    assert not progress.maybe_decrease_to(5, 3)  # rejects an index it already matched
    assert progress.maybe_decrease_to(9, 7)
    assert progress.next_index == 7


def test_probe_walks_back_with_the_hint_and_pauses_between_probes() -> None:
    progress = Progress(next_index=20, max_inflight_messages=4, max_inflight_bytes=None)
    progress.sent_entries(25, 10)
    assert progress.state is ProgressState.PROBE and progress.is_paused()
    assert not progress.maybe_decrease_to(12, 5)  # answers some other probe: stale
    assert progress.maybe_decrease_to(19, 11)
    assert progress.next_index == 12 and not progress.is_paused()


def test_snapshot_state_pauses_and_resumes_after_the_snapshot() -> None:
    progress = Progress(next_index=5, max_inflight_messages=4, max_inflight_bytes=None)
    progress.become_snapshot(40)
    assert progress.is_paused()
    progress.become_probe()
    assert progress.next_index == 41


def test_quorum_commit_index_and_vote_tally() -> None:
    tracker = ProgressTracker(frozenset({1, 2, 3, 4, 5}))
    tracker.reset(1, 4, None)
    for voter, match in {1: 9, 2: 7, 3: 3, 4: 7, 5: 1}.items():
        tracker.progress[voter].maybe_update(match)
    assert tracker.committed_index() == 7
    tracker.record_vote(1, True)
    tracker.record_vote(2, False)
    tracker.record_vote(2, True)  # a duplicate answer does not change the first
    assert tracker.tally() is VoteResult.PENDING
    tracker.record_vote(3, False)
    tracker.record_vote(4, False)
    assert tracker.tally() is VoteResult.LOST


def test_config_refuses_nonsense() -> None:
    with pytest.raises(CoreContractError):
        Config(election_timeout_ticks=1, heartbeat_interval_ticks=1)
    with pytest.raises(CoreContractError):
        Config(max_inflight_appends=0)
