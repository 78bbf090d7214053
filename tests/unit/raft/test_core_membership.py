"""Voter membership changes in the Raft core, one rule per test (the golden files
membership*.txt show whole interleavings)."""

from __future__ import annotations

import random
from pathlib import Path

import cbor2
import pytest
from raft_simulation.lockstep import LockstepCluster

from rillet.raft.core import RaftCore
from rillet.raft.core_config import Config
from rillet.raft.core_errors import MalformedMessage, MembershipChangeRefused
from rillet.raft.durable_log import DurableLog
from rillet.raft.errors import NotLeaderError
from rillet.raft.log_storage import MemoryStorage
from rillet.raft.membership import Configuration, Voter
from rillet.raft.message_codec import decode_message, encode_message
from rillet.raft.messages import (
    EntryKind,
    HardState,
    InstallSnapshot,
    LogEntry,
    VoteRequest,
    VoteResponse,
)
from rillet.raft.quorum import Snapshot
from rillet.raft.ready import Role

QUIET = Config(pre_vote=False, check_quorum=False)
DIR_A = "a" * 32
DIR_B = "b" * 32


def _cluster(voters: int = 3, nodes: int = 4, config: Config | None = None) -> LockstepCluster:
    cluster = LockstepCluster(range(1, voters + 1), config, nodes=nodes, directories=True)
    cluster.elect(1)
    cluster.deliver()
    return cluster


def test_an_observer_is_replicated_to_but_counts_in_no_quorum() -> None:
    cluster = _cluster()
    cluster.partition([1, 4], [2, 3])
    entry = cluster.core(1).propose(b"x")
    cluster.deliver()
    assert cluster.core(4).raft_log.last_index() == entry.index  # n4 has it...
    assert cluster.core(1).raft_log.committed < entry.index  # ...but it is no quorum


def test_an_added_voter_counts_from_the_moment_the_leader_appends_the_entry() -> None:
    cluster = _cluster()
    leader = cluster.core(1)
    leader.add_voter(4, cluster.directory_id(4))
    cluster.deliver()
    assert leader.voters == {1, 2, 3, 4}
    cluster.partition([1, 4], [2, 3])
    entry = leader.propose(b"x")
    cluster.deliver()
    assert leader.raft_log.committed < entry.index  # 2 of 4 is not a quorum any more


def test_the_configuration_in_effect_is_the_latest_entry_even_uncommitted() -> None:
    cluster = _cluster()
    cluster.partition([1], [2, 3, 4])
    cluster.core(1).remove_voter(3, cluster.directory_id(3))
    cluster.process()
    assert cluster.core(1).voters == {1, 2}  # not committed, already in effect
    assert cluster.core(1).raft_log.committed < cluster.core(1).raft_log.last_index()


def test_an_uncommitted_configuration_cut_back_reverts_to_the_one_before() -> None:
    cluster = _cluster(config=QUIET)
    cluster.partition([1], [2, 3, 4])
    cluster.core(1).remove_voter(3, cluster.directory_id(3))
    cluster.process()
    cluster.core(2).campaign()
    cluster.deliver()
    assert cluster.core(2).role is Role.LEADER
    cluster.heal()
    cluster.run(3)
    assert cluster.core(1).role is Role.FOLLOWER
    assert cluster.core(1).voters == {1, 2, 3}  # its removal entry was overwritten


def test_only_one_change_at_a_time_and_only_after_an_own_term_commit() -> None:
    cluster = LockstepCluster([1, 2, 3], nodes=4)
    core = cluster.core(1)
    core.campaign()
    for _ in range(4):
        cluster.deliver_round()
    assert core.role is Role.LEADER and core.raft_log.committed == 0
    with pytest.raises(MembershipChangeRefused, match="entry of its term"):
        core.add_voter(4)
    cluster.deliver()
    cluster.partition([1], [2, 3, 4])
    core.remove_voter(3)
    with pytest.raises(MembershipChangeRefused, match="not committed yet"):
        core.remove_voter(2)
    with pytest.raises(MembershipChangeRefused, match="not committed yet"):
        core.add_voter(4)


def test_invalid_changes_are_refused_with_the_reason() -> None:
    cluster = _cluster(voters=1, nodes=2)
    core = cluster.core(1)
    with pytest.raises(MembershipChangeRefused, match="last voter"):
        core.remove_voter(1)
    with pytest.raises(MembershipChangeRefused, match="already a voter"):
        core.add_voter(1)
    with pytest.raises(MembershipChangeRefused, match="not a voter"):
        core.remove_voter(2)
    with pytest.raises(NotLeaderError):
        cluster.core(2).add_voter(2)
    core.add_voter(2, DIR_A)
    with pytest.raises(MembershipChangeRefused, match="still catching up"):
        core.add_voter(2, DIR_A)


def test_a_voter_of_another_directory_must_be_removed_before_the_new_one_is_added() -> None:
    cluster = _cluster()
    core = cluster.core(1)
    core.add_voter(4, DIR_A)
    cluster.deliver()
    with pytest.raises(MembershipChangeRefused, match="remove that voter first"):
        core.add_voter(4, DIR_B)
    with pytest.raises(MembershipChangeRefused, match="not a voter"):
        core.remove_voter(4, DIR_B)


def test_a_leader_that_removes_itself_leads_until_the_removal_commits_then_hands_over() -> None:
    cluster = _cluster(voters=3, nodes=3)
    leader = cluster.core(1)
    leader.remove_voter(1)
    cluster.process()
    assert leader.role is Role.LEADER and not leader.is_voter()
    cluster.run(3)
    assert leader.role is Role.FOLLOWER
    new_leader = cluster.leader()
    assert new_leader in (2, 3)
    for _ in range(60):
        leader.tick()  # a removed voter never campaigns
    assert leader.role is Role.FOLLOWER and leader.outbox == []


def test_a_removed_leader_with_the_longest_log_may_campaign_to_finish_its_removal() -> None:
    """The removal entry is the latest but not known committed: no one else can be elected
    (their logs are behind), so the removed voter campaigns, counting the new set's votes."""
    storage = MemoryStorage()
    storage.append([LogEntry(1, 1, b"", EntryKind.LEADER_NOOP)])
    storage.append([LogEntry(2, 1, Configuration.of([2]).encode(), EntryKind.CONFIG)])
    core = RaftCore(1, [1, 2], storage, QUIET, random.Random(0))
    assert not core.is_voter() and core.may_campaign()
    core.campaign()
    assert core.role is Role.CANDIDATE
    requests = [m for m in core.outbox if isinstance(m, VoteRequest)]
    assert [m.recipient for m in requests] == [2]  # only the new set's voters are asked
    core.step(VoteResponse(core.term, 2, 1, True))
    assert core.role is Role.LEADER  # n2's vote is a majority of [n2]


def test_a_request_for_another_directory_of_our_node_id_is_refused() -> None:
    core = RaftCore(2, [1, 2, 3], MemoryStorage(), QUIET, random.Random(0), directory_id=DIR_B)
    core.step(VoteRequest(1, 1, 2, 0, 0, voter_directory=DIR_A))
    assert core.outbox == [VoteResponse(1, 2, 1, False)]
    assert core.vote is None


def test_a_vote_is_not_repeated_for_another_directory_of_the_candidate() -> None:
    core = RaftCore(2, [1, 2, 3], MemoryStorage(), QUIET, random.Random(0), directory_id=DIR_B)
    core.step(VoteRequest(1, 1, 2, 0, 0, candidate_directory=DIR_A))
    assert core.outbox[-1].granted  # type: ignore[union-attr]
    assert (core.vote, core.vote_directory) == (1, DIR_A)
    core.step(VoteRequest(1, 1, 2, 0, 0, candidate_directory="c" * 32))
    assert not core.outbox[-1].granted  # type: ignore[union-attr]
    core.step(VoteRequest(1, 1, 2, 0, 0, candidate_directory=DIR_A))
    assert core.outbox[-1].granted  # type: ignore[union-attr]


def test_the_vote_directory_survives_a_restart(tmp_path: Path) -> None:
    log = DurableLog.open(tmp_path)
    log.set_hard_state(HardState(3, 1, 0, DIR_A))
    log.close()
    assert DurableLog.open(tmp_path).hard_state() == HardState(3, 1, 0, DIR_A)


def test_the_configuration_survives_restart_compaction_and_snapshot_install() -> None:
    cluster = _cluster()
    leader = cluster.core(1)
    leader.add_voter(4, cluster.directory_id(4))
    cluster.deliver()
    leader.propose(b"x")
    cluster.deliver()
    applied = leader.raft_log.applied
    leader.compact(Snapshot(applied, leader.term, b"state"))
    cluster.process()
    snapshot = leader.raft_log.snapshot()
    assert Configuration.decode(snapshot.voters).ids() == {1, 2, 3, 4}
    cluster.crash(1)
    cluster.restart(1)
    assert cluster.core(1).voters == {1, 2, 3, 4}  # from the snapshot, not the bootstrap
    fresh = RaftCore(5, [1, 2, 3], MemoryStorage(), QUIET, random.Random(0))
    fresh.step(InstallSnapshot(leader.term, 1, 5, snapshot))
    assert fresh.voters == {1, 2, 3, 4}


def test_configurations_and_directory_ids_round_trip_and_garbage_is_refused() -> None:
    configuration = Configuration((Voter(3, DIR_A), Voter(1)))
    assert [v.node_id for v in configuration.voters] == [1, 3]
    assert Configuration.decode(configuration.encode()) == configuration
    for garbage in (b"", b"\xff", b"\x80", b"\x81\x82\x01\x63abc", b"\x81\x82\x00\x60"):
        with pytest.raises(MalformedMessage):
            Configuration.decode(garbage)
    request = VoteRequest(2, 1, 3, 5, 1, candidate_directory=DIR_A, voter_directory=DIR_B)
    assert decode_message(encode_message(request)) == request
    snapshot = InstallSnapshot(2, 1, 3, Snapshot(4, 2, b"s", configuration.encode()))
    assert decode_message(encode_message(snapshot)) == snapshot


def test_a_catch_up_that_never_finishes_is_given_up_without_a_change() -> None:
    cluster = _cluster()
    cluster.partition([1, 2, 3], [4])
    leader = cluster.core(1)
    leader.add_voter(4, cluster.directory_id(4))
    cluster.run(Config().effective_catch_up_timeout_ticks() + 1)
    assert leader.catching_up is None and leader.catch_up_failed is not None
    assert leader.voters == {1, 2, 3}


def test_progress_is_reported_apart_for_voters_and_observers() -> None:
    cluster = _cluster()
    leader = cluster.core(1)
    assert set(leader.voter_progress()) == {1, 2, 3}
    assert leader.observer_progress() == {4: (leader.raft_log.last_index(), 0)}
    assert cluster.core(2).observer_progress() == {}


def test_vote_requests_and_snapshots_of_the_previous_release_still_decode() -> None:
    old_request = cbor2.dumps([1, 5, 2, 1, 3, 5, 1, True, False])  # no directory ids
    assert decode_message(old_request) == VoteRequest(2, 1, 3, 5, 1, True, False)
    old_snapshot = cbor2.dumps([1, 7, 2, 1, 3, [4, 2, b"s"]])  # no voters
    assert decode_message(old_snapshot) == InstallSnapshot(2, 1, 3, Snapshot(4, 2, b"s"))
