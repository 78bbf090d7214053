"""Elections and leadership on hand-driven clusters: votes, pre-vote with a rejoining
node, check-quorum, and leadership transfer. (testdata/ shows the same paths message by
message.)"""

from __future__ import annotations

import random

import pytest
from raft_simulation.lockstep import LockstepCluster

from rillet.raft.core import RaftCore
from rillet.raft.core_config import Config
from rillet.raft.core_errors import CoreContractError, ProposalDropped
from rillet.raft.election import CampaignKind
from rillet.raft.errors import NotLeaderError
from rillet.raft.log_storage import MemoryStorage
from rillet.raft.messages import VoteRequest, VoteResponse
from rillet.raft.ready import Role

QUIET = Config(pre_vote=False, check_quorum=False)


def applied_data(cluster: LockstepCluster, node: int) -> list[bytes]:
    return [e.data for e in cluster.applied[node] if e.data]


# -- elections -------------------------------------------------------------------------


def test_a_single_voter_leads_once_its_vote_is_durable_and_commits_only_once_persisted() -> None:
    storage = MemoryStorage()
    core = RaftCore(1, [1], storage, Config(), random.Random(0))
    core.campaign()
    # Its own vote wins, but it leads only once that vote is durable: a crash before
    # would let it grant term 1 to another node after a restart.
    assert core.role is Role.CANDIDATE and core.term == 1
    vote_ready = core.ready()
    assert vote_ready.must_sync and vote_ready.hard_state is not None
    storage.set_hard_state(vote_ready.hard_state)
    core.advance(vote_ready)
    assert core.role is Role.LEADER and core.term == 1
    entry = core.propose(b"x")
    ready = core.ready()
    assert ready.must_sync and [e.index for e in ready.entries] == [1, 2]
    assert core.raft_log.committed == 0  # nothing counts before the driver persisted it
    storage.append(ready.entries)
    core.advance(ready)
    assert core.raft_log.committed == entry.index == 2


def test_three_voters_elect_one_leader_which_replicates_and_commits() -> None:
    cluster = LockstepCluster([1, 2, 3])
    leader = cluster.elect(1)
    leader.propose(b"a")
    cluster.deliver()
    for node in (1, 2, 3):
        assert applied_data(cluster, node) == [b"a"]
        assert cluster.core(node).term == 1
    assert [cluster.core(n).role for n in (2, 3)] == [Role.FOLLOWER, Role.FOLLOWER]


def test_the_vote_is_persisted_in_the_ready_that_sends_it() -> None:
    """pysyncobj #201/#202: term and vote must be durable before the vote leaves."""
    storage = MemoryStorage()
    voter = RaftCore(2, [1, 2, 3], storage, QUIET, random.Random(0))
    voter.step(VoteRequest(1, 1, 2, 0, 0))
    ready = voter.ready()
    assert ready.must_sync
    assert ready.hard_state is not None and ready.hard_state.vote == 1
    assert ready.messages == (VoteResponse(1, 2, 1, True),)


def test_one_vote_per_term_survives_a_restart() -> None:
    cluster = LockstepCluster([1, 2, 3], QUIET)
    cluster.core(1).campaign()
    cluster.deliver_round()  # 2 and 3 vote for 1
    cluster.crash(2)
    cluster.restart(2)
    core = cluster.core(2)
    assert (core.term, core.vote) == (1, 1)
    core.step(VoteRequest(1, 3, 2, 5, 1))
    cluster.process()
    assert VoteResponse(1, 2, 3, False) in cluster.queue


def test_votes_go_only_to_logs_at_least_as_up_to_date() -> None:
    cluster = LockstepCluster([1, 2, 3], QUIET)
    leader = cluster.elect(1)
    cluster.partition([1, 2], [3])
    leader.propose(b"only on 1 and 2")
    cluster.deliver()
    cluster.heal()
    cluster.core(3).campaign(CampaignKind.ELECTION)
    cluster.deliver()
    assert cluster.core(3).role is not Role.LEADER
    assert cluster.core(1).raft_log.term(2) == 1


# -- pre-vote and check-quorum ---------------------------------------------------------


def test_a_rejoining_partitioned_node_does_not_disrupt_the_leader() -> None:
    cluster = LockstepCluster([1, 2, 3])
    cluster.elect(1)
    cluster.partition([1, 2], [3])
    cluster.run(40)
    assert cluster.core(3).term == 1  # pre-votes never bumped its term
    cluster.heal()
    cluster.run(3)
    assert cluster.leader() == 1 and cluster.core(1).term == 1
    assert cluster.core(3).leader_id == 1


def test_without_pre_vote_the_rejoining_node_deposes_the_leader() -> None:
    cluster = LockstepCluster([1, 2, 3], QUIET)
    cluster.elect(1)
    cluster.partition([1, 2], [3])
    cluster.run(40)
    assert cluster.core(3).term > 1
    cluster.heal()
    cluster.run(20)
    assert cluster.core(1).term > 1


def test_check_quorum_makes_an_isolated_leader_step_down() -> None:
    cluster = LockstepCluster([1, 2, 3])
    cluster.elect(1)
    cluster.partition([1], [2, 3])
    for _ in range(2 * cluster.config.election_timeout_ticks):
        cluster.tick(1)
    assert cluster.core(1).role is Role.FOLLOWER and cluster.core(1).leader_id is None
    with pytest.raises(NotLeaderError):
        cluster.core(1).propose(b"x")


def _ticks_until_a_deaf_leader_steps_down(cluster: LockstepCluster) -> int:
    """Elect node 1, cut it one way (its messages arrive, nothing reaches it) and run until
    it stops leading (within two election timeouts); returns how many rounds that took."""
    cluster.elect(1)
    cluster.cut(2, 1)
    cluster.cut(3, 1)
    ticks = 0
    while cluster.core(1).role is Role.LEADER:
        cluster.run(1)
        ticks += 1
        assert ticks <= 2 * cluster.config.election_timeout_ticks
    return ticks


def test_a_leader_that_hears_nothing_hands_over_as_it_steps_down() -> None:
    """A one-way cut: the leader's messages arrive, nothing reaches it. Its followers stay
    in its lease as long as its heartbeats come; stepping down (check-quorum), it sends
    TimeoutNow to the voter furthest along, which is elected at once instead of after a
    whole election timeout of silence."""
    cluster = LockstepCluster([1, 2, 3])
    _ticks_until_a_deaf_leader_steps_down(cluster)
    assert cluster.leader() == 2 and cluster.core(2).term == 2  # the same tick
    assert cluster.core(3).leader_id == 2


def test_check_quorum_steps_down_one_election_timeout_after_the_quorum_went_quiet() -> None:
    """Check-quorum over a sliding window: a leader steps down as soon as no quorum has been
    heard from for an election timeout. Checked once per timeout over the timeout just
    ended, a cut right after a check went unnoticed for almost two timeouts, and the
    node's broker was fenced that much later (chaos, one-way cuts of the controller)."""
    cluster = LockstepCluster([1, 2, 3])
    ticks = _ticks_until_a_deaf_leader_steps_down(cluster)  # followers heard just before
    assert ticks == cluster.config.election_timeout_ticks


def test_followers_with_a_live_leader_ignore_vote_requests() -> None:
    cluster = LockstepCluster([1, 2, 3])
    cluster.elect(1)
    follower = cluster.core(2)
    follower.step(VoteRequest(5, 3, 2, 9, 9))
    assert follower.term == 1 and follower.leader_id == 1 and not follower.outbox


# -- leadership transfer ---------------------------------------------------------------


def test_transfer_catches_the_target_up_then_hands_over() -> None:
    cluster = LockstepCluster([1, 2, 3])
    leader = cluster.elect(1)
    cluster.partition([1, 2], [3])
    leader.propose(b"a")
    cluster.deliver()
    cluster.heal()
    leader.transfer_leadership(3)
    with pytest.raises(ProposalDropped):
        leader.propose(b"refused")
    cluster.deliver()
    assert cluster.leader() == 3 and cluster.core(3).term == 2
    assert applied_data(cluster, 3) == [b"a"]


def test_only_leaders_transfer_and_only_to_voters() -> None:
    cluster = LockstepCluster([1, 2, 3])
    leader = cluster.elect(1)
    with pytest.raises(NotLeaderError) as info:
        cluster.core(2).transfer_leadership(3)
    assert info.value.leader_id == 1
    with pytest.raises(CoreContractError):
        leader.transfer_leadership(9)


# -- a leader reported down ------------------------------------------------------------


def ticks_until_campaign(cluster: LockstepCluster, node: int) -> int | None:
    """Tick ``node`` alone (nothing delivered) until it leaves the follower role."""
    for ticks in range(1, 2 * cluster.config.election_timeout_ticks + 1):
        cluster.tick(node)
        if cluster.core(node).role is not Role.FOLLOWER:
            return ticks
    return None


def test_followers_of_a_dead_leader_pre_campaign_within_ticks_one_tick_apart() -> None:
    cluster = LockstepCluster([1, 2, 3, 4, 5])
    cluster.elect(1)
    cluster.crash(1)
    fired_after_ticks = {}
    for node in (2, 3, 4, 5):
        cluster.core(node).report_leader_down(1)
        assert cluster.core(node).leader_id is None  # its lease no longer holds anyone off
        fired_after_ticks[node] = ticks_until_campaign(cluster, node)
        # Pre-vote stays in front: no term is bumped before a majority says yes.
        assert cluster.core(node).role is Role.PRE_CANDIDATE and cluster.core(node).term == 1
    # A few ticks, not a whole timeout (10..19 ticks), and never two in one tick: a split
    # vote would cost a whole timeout again.
    assert fired_after_ticks == {2: 1, 3: 2, 4: 3, 5: 4}


def test_a_successor_is_elected_within_two_ticks_of_the_report() -> None:
    reported, unreported = LockstepCluster([1, 2, 3]), LockstepCluster([1, 2, 3])
    for cluster in (reported, unreported):
        cluster.elect(1)
        cluster.crash(1)
    for node in (2, 3):
        reported.core(node).report_leader_down(1)
    reported.run(2)
    unreported.run(2)
    assert reported.leader() == 2 and reported.core(3).leader_id == 2
    assert reported.core(2).term == 2
    assert unreported.leader() is None  # without the report: a whole election timeout


def test_only_a_follower_of_the_reported_node_acts_on_the_report() -> None:
    cluster = LockstepCluster([1, 2, 3])
    leader = cluster.elect(1)
    before = [cluster.core(n).status() for n in (1, 2, 3)]
    leader.report_leader_down(2)  # a leader: no follower of anyone
    leader.report_leader_down(1)  # itself
    cluster.core(2).report_leader_down(3)  # not its leader
    cluster.core(2).report_leader_down(9)  # not a voter
    cluster.process()
    assert [cluster.core(n).status() for n in (1, 2, 3)] == before
    assert not cluster.queue
    fired = ticks_until_campaign(cluster, 2)  # its timer was left alone
    assert fired is not None and fired >= cluster.config.election_timeout_ticks


def test_a_false_report_costs_at_most_an_ignored_pre_vote() -> None:
    cluster = LockstepCluster([1, 2, 3])
    cluster.elect(1)  # alive, though 2 is told otherwise
    cluster.core(2).report_leader_down(1)
    assert ticks_until_campaign(cluster, 2) == 1
    cluster.deliver()  # its pre-votes reach 1 and 3, who still trust their leader
    assert [cluster.core(n).term for n in (1, 2, 3)] == [1, 1, 1]
    cluster.run(1)  # the leader's next heartbeat
    assert cluster.leader() == 1 and cluster.core(2).leader_id == 1
    assert cluster.core(2).role is Role.FOLLOWER


def test_hearing_from_the_leader_cancels_the_early_campaign() -> None:
    cluster = LockstepCluster([1, 2, 3])
    cluster.elect(1)
    cluster.core(2).report_leader_down(1)
    cluster.tick(1)  # a heartbeat, delivered before 2's next tick
    cluster.deliver()
    assert cluster.core(2).leader_id == 1
    # Back to the usual timeout (at least election_timeout_ticks without a leader).
    fired = ticks_until_campaign(cluster, 2)
    assert fired is not None and fired >= cluster.config.election_timeout_ticks


def test_rival_pre_candidates_yield_to_the_lower_id_and_one_is_elected_at_once() -> None:
    """Two followers that noticed a dead leader in the same tick: each granting the other's
    pre-vote made both campaign and split the vote (a whole timeout, 1-2 s by default)."""
    cluster = LockstepCluster([1, 2, 3])
    cluster.elect(1)
    cluster.crash(1)
    cluster.core(3).campaign()  # the higher id asks first: the order does not matter
    cluster.core(2).campaign()
    assert [cluster.core(n).role for n in (2, 3)] == [Role.PRE_CANDIDATE] * 2
    cluster.deliver()
    assert cluster.leader() == 2 and cluster.core(3).leader_id == 2
    assert cluster.core(2).term == cluster.core(3).term == 2  # one election, no split


def test_a_rival_pre_candidate_with_a_longer_log_wins_whatever_its_id() -> None:
    cluster = LockstepCluster([1, 2, 3])
    leader = cluster.elect(1)
    cluster.cut(1, 2)
    leader.propose(b"only 1 and 3 have it")
    cluster.deliver()
    cluster.crash(1)
    cluster.heal()
    cluster.core(2).campaign()
    cluster.core(3).campaign()
    cluster.deliver()
    assert cluster.leader() == 3 and cluster.core(2).leader_id == 3
    assert cluster.core(3).term == 2
    assert applied_data(cluster, 2)[-1:] == [b"only 1 and 3 have it"]
