"""Replication on hand-driven clusters: the Figure-8 commit rule, snapshots, ReadIndex,
stale and duplicate messages, batching and pipelining, and the Ready contract."""

from __future__ import annotations

import dataclasses
import random

import pytest
from raft_simulation.lockstep import LockstepCluster

from rillet.raft.core import RaftCore
from rillet.raft.core_config import Config
from rillet.raft.core_errors import CoreContractError
from rillet.raft.errors import NotLeaderError
from rillet.raft.log_storage import MemoryStorage
from rillet.raft.messages import (
    AppendEntries,
    AppendResponse,
    Heartbeat,
    LogEntry,
    VoteResponse,
)
from rillet.raft.quorum import Snapshot
from rillet.raft.ready import Role

QUIET = Config(pre_vote=False, check_quorum=False)


def applied_data(cluster: LockstepCluster, node: int) -> list[bytes]:
    return [e.data for e in cluster.applied[node] if e.data]


# -- commit rule -----------------------------------------------------------------------


def test_figure_8_an_old_term_entry_on_a_majority_is_not_committed() -> None:
    """pysyncobj #166/#167/#169: commit index and old-term entries."""
    one_entry_batches = Config(pre_vote=False, check_quorum=False, max_append_entries=1)
    cluster = LockstepCluster([1, 2, 3], one_entry_batches)
    cluster.elect(1)
    cluster.partition([1])
    cluster.core(1).propose(b"x")  # index 2, term 1, only on n1
    cluster.deliver()
    cluster.crash(1)
    cluster.heal()
    cluster.core(2).campaign()
    cluster.deliver_round()
    cluster.deliver_round()  # n2 leads term 2; its no-op at index 2 is ready, not sent
    cluster.partition([2])
    cluster.deliver()
    cluster.crash(2)
    cluster.heal()
    cluster.restart(1)
    cluster.core(1).campaign()
    cluster.deliver()
    cluster.core(1).campaign()
    for _ in range(6):
        cluster.deliver_round()
    leader = cluster.core(1)
    assert leader.role is Role.LEADER and leader.term == 3
    assert cluster.core(3).raft_log.term(2) == 1  # index 2 is on n1 and n3: a majority
    assert leader.tracker.progress[3].match_index == 2
    assert leader.raft_log.committed == 1  # ... and still not committed
    cluster.deliver()
    assert leader.raft_log.committed == 3  # committed with the term-3 no-op


def test_an_acknowledgement_leaves_only_with_the_sync_of_what_it_acknowledges() -> None:
    """pysyncobj #84: it acknowledged entries it had not fsynced."""
    follower = RaftCore(2, [1, 2, 3], MemoryStorage(), QUIET, random.Random(0))
    follower.step(AppendEntries(1, 1, 2, 0, 0, (LogEntry(1, 1, b"a"),), 0))
    ready = follower.ready()
    assert ready.must_sync and ready.entries == (LogEntry(1, 1, b"a"),)
    assert AppendResponse(1, 2, 1, 1) in ready.messages


def test_a_follower_commit_index_never_goes_backwards() -> None:
    cluster = LockstepCluster([1, 2, 3])
    leader = cluster.elect(1)
    leader.propose(b"a")
    cluster.deliver()
    follower = cluster.core(2)
    follower.step(Heartbeat(1, 1, 2, 0))  # a reordered, older heartbeat
    follower.step(AppendEntries(1, 1, 2, 1, 1, (LogEntry(2, 1, b"a"),), 1))
    assert follower.raft_log.committed == 2


# -- snapshots -------------------------------------------------------------------------


def test_a_lagging_follower_is_caught_up_with_a_snapshot() -> None:
    cluster = LockstepCluster([1, 2, 3])
    leader = cluster.elect(1)
    cluster.crash(3)
    for data in (b"a", b"b", b"c"):
        leader.propose(data)
    cluster.deliver()
    leader.compact(Snapshot(3, 1, b"state@3"))
    cluster.process()
    assert leader.raft_log.first_index() == 4
    cluster.restart(3)
    cluster.run(2)
    follower = cluster.core(3)
    assert follower.raft_log.snapshot().index == 3
    assert follower.raft_log.committed == 4
    leader.propose(b"d")
    cluster.deliver()
    assert cluster.applied[3][-1].data == b"d"


def test_compaction_is_refused_for_unapplied_or_mismatched_snapshots() -> None:
    cluster = LockstepCluster([1, 2, 3])
    leader = cluster.elect(1)
    with pytest.raises(CoreContractError, match="unapplied"):
        leader.compact(Snapshot(5, 1, b""))
    with pytest.raises(CoreContractError, match="term"):
        leader.compact(Snapshot(1, 7, b""))
    leader.compact(Snapshot(1, 1, b"s"))
    cluster.process()
    with pytest.raises(CoreContractError, match="not newer"):
        leader.compact(Snapshot(1, 1, b"s"))


# -- ReadIndex -------------------------------------------------------------------------


def test_read_index_waits_for_a_quorum_heartbeat_round() -> None:
    cluster = LockstepCluster([1, 2, 3])
    leader = cluster.elect(1)
    leader.read_index(b"r")
    cluster.process()
    assert not any("read ready" in line for line in cluster.take_output())
    cluster.deliver()
    assert "n1 read ready ctx=b'r' index=1" in cluster.take_output()


def test_an_isolated_leader_releases_no_read() -> None:
    cluster = LockstepCluster([1, 2, 3])
    leader = cluster.elect(1)
    cluster.partition([1], [2, 3])
    leader.read_index(b"r")
    cluster.deliver()
    assert not any("read ready" in line for line in cluster.take_output())


def test_a_follower_read_goes_through_the_leader() -> None:
    cluster = LockstepCluster([1, 2, 3])
    leader = cluster.elect(1)
    leader.propose(b"a")
    cluster.deliver()
    cluster.take_output()
    cluster.core(3).read_index(b"f")
    cluster.deliver()
    assert "n3 read ready ctx=b'f' index=2" in cluster.take_output()


def test_candidates_refuse_reads() -> None:
    cluster = LockstepCluster([1, 2, 3])
    cluster.core(1).campaign()
    with pytest.raises(NotLeaderError):
        cluster.core(1).read_index(b"r")


# -- stale, duplicate and foreign messages ---------------------------------------------


def test_stale_and_foreign_messages_change_nothing() -> None:
    cluster = LockstepCluster([1, 2, 3], QUIET)
    cluster.elect(1)
    cluster.core(2).campaign()
    cluster.deliver()  # n2 leads term 2
    follower = cluster.core(3)
    before = (follower.term, follower.raft_log.last_index(), follower.raft_log.committed)
    follower.step(AppendEntries(1, 1, 3, 2, 2, (LogEntry(3, 1, b"stale"),), 3))
    follower.step(Heartbeat(1, 1, 3, 9))
    follower.step(VoteResponse(1, 1, 3, True))
    follower.step(AppendEntries(2, 2, 1, 2, 2, (LogEntry(3, 2, b"not for us"),), 3))
    assert (follower.term, follower.raft_log.last_index(), follower.raft_log.committed) == before
    assert follower.outbox == []  # stale messages are dropped silently without check-quorum


def test_a_stale_leader_learns_the_new_term_from_its_followers() -> None:
    cluster = LockstepCluster([1, 2, 3])
    cluster.elect(1)
    follower = cluster.core(2)
    follower.step(Heartbeat(0, 1, 2, 0))  # lower term, pre-vote on: answer with our term
    assert follower.outbox == [AppendResponse(1, 2, 1, 0)]


def test_duplicated_acknowledgements_do_not_count_twice() -> None:
    cluster = LockstepCluster([1, 2, 3, 4, 5], QUIET)
    leader = cluster.elect(1)
    cluster.partition([1, 2], [3, 4, 5])
    entry = leader.propose(b"x")
    cluster.deliver()
    ack = AppendResponse(1, 2, 1, entry.index)
    for _ in range(3):
        leader.step(ack)
    assert leader.raft_log.committed < entry.index  # n1 and n2 are not a quorum of 5


def test_a_duplicated_append_after_commit_is_answered_with_the_commit_index() -> None:
    cluster = LockstepCluster([1, 2, 3])
    leader = cluster.elect(1)
    leader.propose(b"a")
    cluster.deliver()
    follower = cluster.core(2)
    follower.step(AppendEntries(1, 1, 2, 0, 0, (LogEntry(1, 1),), 0))
    assert follower.outbox == [AppendResponse(1, 2, 1, 2)]
    assert follower.raft_log.last_index() == 2


def test_fast_backtracking_skips_a_diverged_term_per_round_trip() -> None:
    cluster = LockstepCluster([1, 2, 3], QUIET)
    leader = cluster.elect(1)
    cluster.partition([1], [2, 3])
    for i in range(30):
        leader.propose(b"lost%d" % i)  # 30 entries of term 1 nobody else gets
    cluster.deliver()
    cluster.core(2).campaign()
    cluster.deliver()
    new_leader = cluster.core(2)
    new_leader.propose(b"kept")
    cluster.deliver()
    cluster.heal()
    cluster.take_output()
    cluster.run(1)
    rejects = [line for line in cluster.take_output() if "2->1" in line or "1->2" in line]
    assert sum("reject" in line for line in rejects) <= 2
    assert cluster.core(1).raft_log.last_index() == new_leader.raft_log.last_index()


# -- the Ready contract ----------------------------------------------------------------


def test_ready_must_be_advanced_before_the_next() -> None:
    core = RaftCore(1, [1, 2, 3], MemoryStorage(), Config(), random.Random(0))
    core.campaign()
    ready = core.ready()
    assert not core.has_ready()
    with pytest.raises(CoreContractError):
        core.ready()
    with pytest.raises(CoreContractError):
        core.advance(dataclasses.replace(ready))  # an equal copy is not the Ready handed out
    core.advance(ready)
    with pytest.raises(CoreContractError):
        core.advance(ready)


def test_proposals_before_a_ready_go_out_in_one_batch_per_follower() -> None:
    cluster = LockstepCluster([1, 2, 3], Config(max_append_entries=8))
    leader = cluster.elect(1)
    for i in range(20):
        leader.propose(b"p%d" % i)
    ready = leader.ready()
    appends = [m for m in ready.messages if isinstance(m, AppendEntries)]
    assert len(ready.entries) == 20
    assert sorted(len(m.entries) for m in appends) == [4, 4, 8, 8, 8, 8]


def test_pipelining_is_bounded_by_the_inflight_window() -> None:
    cluster = LockstepCluster([1, 2, 3], Config(max_append_entries=1, max_inflight_appends=3))
    leader = cluster.elect(1)
    for i in range(10):
        leader.propose(b"p%d" % i)
    ready = leader.ready()
    to_two = [m for m in ready.messages if isinstance(m, AppendEntries) and m.recipient == 2]
    assert len(to_two) == 3
    leader.advance(ready)


def test_not_leader_errors_carry_the_leader_hint() -> None:
    cluster = LockstepCluster([1, 2, 3])
    cluster.elect(2)
    with pytest.raises(NotLeaderError) as info:
        cluster.core(3).propose(b"x")
    assert (info.value.leader_id, info.value.term) == (2, 1)


def test_node_ids_and_membership_are_validated() -> None:
    # A node outside the voter set is an observer: it never campaigns.
    observer = RaftCore(4, [1, 2, 3], MemoryStorage(), Config(), random.Random(0))
    assert not observer.is_voter()
    for _ in range(50):
        observer.tick()
    assert observer.role is Role.FOLLOWER and observer.outbox == []
    # A node formatted to join has no voter set until it learns the cluster's: an observer.
    joining = RaftCore(1, [], MemoryStorage(), Config(), random.Random(0))
    joining.campaign()
    assert joining.role is Role.FOLLOWER and not joining.may_campaign()
    with pytest.raises(CoreContractError):
        RaftCore(1, [1], MemoryStorage(), Config(), random.Random(0), directory_id="short")
    with pytest.raises(CoreContractError):
        RaftCore(0, [0, 1, 2], MemoryStorage(), Config(), random.Random(0))
