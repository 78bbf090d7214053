"""The leader-side core of ISR replication (broker/replica/replication/leader_state.py).

Each test pins one rule the simulation relies on: acks=all is only as true as the high
watermark, and the high watermark is only as safe as the set of replicas it is computed
over (the maximal ISR: committed plus proposed, KIP-497) and the proof of what a follower
holds (its fetch offset, never what was sent to it).
"""

from __future__ import annotations

from rillet.broker.replica.replication.leader_state import IsrProposal, LeaderState
from rillet.broker.replica.replication.session_rounds import SessionRounds

LAG_MS = 100


def leader(
    isr: tuple[int, ...] = (1, 2, 3),
    high_watermark: int = 0,
    epoch_start_offset: int = 0,
    partition_epoch: int = 5,
    now_ms: int = 0,
) -> LeaderState:
    """Broker 1 leading a partition on brokers 1, 2, 3."""
    return LeaderState(
        node_id=1,
        replicas=(1, 2, 3),
        isr=isr,
        leader_epoch=7,
        partition_epoch=partition_epoch,
        high_watermark=high_watermark,
        epoch_start_offset=epoch_start_offset,
        now_ms=now_ms,
    )


def counted(s: LeaderState) -> tuple[int, ...]:
    """The replicas the high watermark is computed over (read through a function, so that
    a type checker does not pin the property to the value of an earlier assertion)."""
    return s.maximal_isr


# -- the high watermark ------------------------------------------------------------------------


def test_high_watermark_is_the_smallest_fetch_offset_over_the_isr() -> None:
    s = leader()
    assert not s.on_follower_fetch(2, 5, leader_end_offset=10, now_ms=1)
    assert s.high_watermark == 0  # 3 has not fetched yet
    assert s.on_follower_fetch(3, 7, leader_end_offset=10, now_ms=2)
    assert s.high_watermark == 5
    assert s.on_follower_fetch(2, 10, leader_end_offset=10, now_ms=3)
    assert s.high_watermark == 7


def test_followers_the_new_leader_has_not_heard_from_hold_the_high_watermark() -> None:
    """A new leader does not know where its in-sync followers are: its own log end is no
    proof, so it keeps the high watermark it had until every one of them has fetched."""
    s = leader(high_watermark=4, epoch_start_offset=10)
    assert not s.update_high_watermark(10)
    assert not s.on_follower_fetch(2, 10, leader_end_offset=10, now_ms=1)
    assert s.high_watermark == 4
    assert s.on_follower_fetch(3, 9, leader_end_offset=10, now_ms=2)
    assert s.high_watermark == 9


def test_replicas_outside_the_isr_do_not_hold_the_high_watermark() -> None:
    s = leader(isr=(1, 2))
    assert s.on_follower_fetch(2, 6, leader_end_offset=6, now_ms=1)
    assert s.high_watermark == 6


def test_high_watermark_never_passes_the_leaders_own_end() -> None:
    s = leader(isr=(1, 2))
    s.on_follower_fetch(2, 8, leader_end_offset=5, now_ms=1)
    assert s.high_watermark == 5


def test_high_watermark_never_moves_back() -> None:
    """A reordered (older) fetch reports a smaller offset: it cannot undo a commit."""
    s = leader(isr=(1, 2))
    s.on_follower_fetch(2, 8, leader_end_offset=10, now_ms=1)
    assert not s.on_follower_fetch(2, 3, leader_end_offset=10, now_ms=2)
    assert s.high_watermark == 8


def test_fetches_from_brokers_that_are_not_replicas_are_ignored() -> None:
    s = leader(isr=(1, 2))
    assert not s.on_follower_fetch(9, 10, leader_end_offset=10, now_ms=1)
    assert 9 not in s.followers and s.high_watermark == 0


def test_the_leader_alone_commits_up_to_its_end() -> None:
    s = leader(isr=(1,))
    assert s.update_high_watermark(12)
    assert s.high_watermark == 12


# -- caught up, shrink, expand ------------------------------------------------------------------


def test_a_follower_that_keeps_pace_with_appends_stays_in_sync() -> None:
    """Appends keep arriving, so the follower is never *at* the log end when it fetches;
    reaching the end the leader had at its previous fetch proves it was caught up then."""
    s = leader(isr=(1, 2), now_ms=0)
    s.on_follower_fetch(2, 0, leader_end_offset=5, now_ms=60)
    s.on_follower_fetch(2, 5, leader_end_offset=10, now_ms=120)  # caught up as of t=60
    s.on_follower_fetch(2, 10, leader_end_offset=15, now_ms=180)  # caught up as of t=120
    assert s.followers[2].last_caught_up_ms == 120
    assert s.isr_change(15, now_ms=200, lag_max_ms=LAG_MS) is None


def test_a_follower_stuck_behind_is_dropped_after_the_lag() -> None:
    s = leader(isr=(1, 2), now_ms=0)
    s.on_follower_fetch(2, 5, leader_end_offset=5, now_ms=10)  # caught up at t=10
    s.on_follower_fetch(2, 5, leader_end_offset=9, now_ms=50)
    s.on_follower_fetch(2, 5, leader_end_offset=12, now_ms=100)  # 5 < 9: not caught up
    assert s.isr_change(12, now_ms=110, lag_max_ms=LAG_MS) is None
    proposal = s.isr_change(12, now_ms=111, lag_max_ms=LAG_MS)
    assert proposal == IsrProposal((1,), 5)


def test_a_leader_that_may_not_remove_proposes_only_joins() -> None:
    """Cut off from the controller (may_remove False), a leader keeps its lagging followers
    in the ISR but still lets a caught-up one join; nothing is left pending meanwhile."""
    s = leader(isr=(1, 2), now_ms=0)
    s.on_follower_fetch(3, 0, leader_end_offset=0, now_ms=10)  # 3 caught up; 2 silent
    joined = s.isr_change(0, now_ms=500, lag_max_ms=LAG_MS, may_remove=False)
    assert joined == IsrProposal((1, 2, 3), 5)
    s.proposal_failed()
    assert s.isr_change(0, now_ms=500, lag_max_ms=LAG_MS, may_remove=True) == IsrProposal((1, 3), 5)


def test_isr_members_get_a_full_lag_window_from_the_election() -> None:
    s = leader(high_watermark=10, epoch_start_offset=10, now_ms=1_000)
    assert s.isr_change(10, now_ms=1_000 + LAG_MS, lag_max_ms=LAG_MS) is None
    proposal = s.isr_change(10, now_ms=1_001 + LAG_MS, lag_max_ms=LAG_MS)
    assert proposal is not None and proposal.isr == (1,)


def test_followers_of_a_new_partition_that_never_fetched_keep_their_place_longer() -> None:
    """A follower still creating the log of a new partition (this leadership began at
    offset 0, and it has not fetched) is not dropped after one lag window but after
    NEW_PARTITION_GRACE_LAGS; one that fetched and then fell behind, or whose connection
    closed, is dropped as usual."""
    s = leader(now_ms=1_000)
    s.on_follower_fetch(3, 0, leader_end_offset=0, now_ms=1_010)  # 3 fetched once
    assert s.isr_change(5, now_ms=1_000 + 3 * LAG_MS, lag_max_ms=LAG_MS) == IsrProposal(
        (1, 2), 5
    )  # 3 fell behind after fetching: dropped; 2 never fetched: kept
    s.proposal_failed()
    proposal = s.isr_change(5, now_ms=1_001 + 3 * LAG_MS, lag_max_ms=LAG_MS)
    assert proposal is not None and proposal.isr == (1,)  # the grace is over for 2 too
    t = leader(now_ms=0)
    t.follower_disconnected(2, now_ms=10, lag_max_ms=LAG_MS, grace_ms=20)
    proposal = t.isr_change(0, now_ms=31, lag_max_ms=LAG_MS)
    assert proposal is not None and proposal.isr == (1, 3)  # a closed connection: no grace


def test_a_disconnected_follower_is_dropped_after_the_grace_not_the_whole_lag() -> None:
    s = leader(isr=(1, 2), now_ms=0)
    s.on_follower_fetch(2, 0, leader_end_offset=0, now_ms=500)
    s.follower_disconnected(2, now_ms=510, lag_max_ms=LAG_MS, grace_ms=20)
    assert s.isr_change(0, now_ms=529, lag_max_ms=LAG_MS) is None
    proposal = s.isr_change(0, now_ms=531, lag_max_ms=LAG_MS)
    assert proposal is not None and proposal.isr == (1,)


def test_a_follower_quiet_in_its_session_is_caught_up_at_each_round() -> None:
    """Caught up on a partition gone quiet in its fetch session, the follower is caught up as
    of the session's latest round, read or not; a read again (on news) keeps the last such
    round as a caught-up fetch; a closed connection still gets only the grace."""
    s = leader(isr=(1, 2), now_ms=0)
    s.on_follower_fetch(2, 5, leader_end_offset=5, now_ms=10)
    rounds = SessionRounds()
    rounds.last_ms = 10
    s.follower_quiet(2, rounds)
    rounds.last_ms = 10 + 3 * LAG_MS  # rounds went on, the partition was not read
    assert s.isr_change(5, now_ms=20 + 3 * LAG_MS, lag_max_ms=LAG_MS) is None
    s.follower_resumed(2, SessionRounds())  # another session's: not this one's quiet mark
    assert s.followers[2].quiet_rounds is rounds
    s.follower_resumed(2, rounds)  # an append woke it: read below the end from now on
    s.on_follower_fetch(2, 5, leader_end_offset=6, now_ms=30 + 3 * LAG_MS)
    assert s.followers[2].last_caught_up_ms == 10 + 3 * LAG_MS
    assert s.isr_change(6, now_ms=10 + 4 * LAG_MS, lag_max_ms=LAG_MS) is None
    proposal = s.isr_change(6, now_ms=11 + 4 * LAG_MS, lag_max_ms=LAG_MS)
    assert proposal is not None and proposal.isr == (1,)  # behind for more than the lag

    t = leader(isr=(1, 2), now_ms=0)
    t.on_follower_fetch(2, 5, leader_end_offset=5, now_ms=10)
    t.follower_quiet(2, rounds)
    t.follower_disconnected(2, now_ms=rounds.last_ms + 5, lag_max_ms=LAG_MS, grace_ms=20)
    assert t.followers[2].quiet_rounds is None
    rounds.last_ms += 1_000  # that session's clock no longer counts for this follower
    proposal = t.isr_change(5, now_ms=rounds.last_ms, lag_max_ms=LAG_MS)
    assert proposal is not None and proposal.isr == (1,)


def test_a_follower_joins_once_at_the_high_watermark_and_the_epoch_start() -> None:
    """It must hold every record this leader may have committed: everything below the high
    watermark, and everything below the leader's first offset (which the leader may have
    committed without knowing it, under its predecessor)."""
    s = leader(isr=(1, 2), high_watermark=8, epoch_start_offset=10)
    s.on_follower_fetch(3, 9, leader_end_offset=12, now_ms=1)
    assert s.isr_change(12, now_ms=2, lag_max_ms=LAG_MS) is None
    s.on_follower_fetch(3, 10, leader_end_offset=12, now_ms=3)
    assert s.isr_change(12, now_ms=4, lag_max_ms=LAG_MS) == IsrProposal((1, 2, 3), 5)

    t = leader(isr=(1, 2), high_watermark=12, epoch_start_offset=10)
    t.on_follower_fetch(3, 11, leader_end_offset=14, now_ms=1)
    assert t.isr_change(14, now_ms=2, lag_max_ms=LAG_MS) is None
    t.on_follower_fetch(3, 12, leader_end_offset=14, now_ms=3)
    assert t.isr_change(14, now_ms=4, lag_max_ms=LAG_MS) == IsrProposal((1, 2, 3), 5)


def test_a_follower_that_never_fetched_does_not_join() -> None:
    s = leader(isr=(1, 2))
    assert s.isr_change(0, now_ms=1, lag_max_ms=LAG_MS) is None


# -- proposals and the maximal ISR --------------------------------------------------------------


def test_an_expansion_counts_the_new_member_at_once() -> None:
    """Whichever way the controller decides, records committed meanwhile are on the new
    member too: if the expansion commits, it may be elected."""
    s = leader(isr=(1, 2))
    s.on_follower_fetch(3, 4, leader_end_offset=4, now_ms=1)
    assert s.isr_change(4, now_ms=2, lag_max_ms=LAG_MS) is not None
    assert counted(s) == (1, 2, 3)
    s.on_follower_fetch(2, 9, leader_end_offset=9, now_ms=3)
    assert s.high_watermark == 4  # held by 3, which has only reached 4


def test_a_shrink_keeps_counting_the_removed_member_until_committed() -> None:
    s = leader(isr=(1, 2, 3), now_ms=0)
    s.on_follower_fetch(2, 3, leader_end_offset=3, now_ms=1)
    s.on_follower_fetch(3, 3, leader_end_offset=3, now_ms=1)
    s.on_follower_fetch(2, 9, leader_end_offset=9, now_ms=150)
    proposal = s.isr_change(9, now_ms=150, lag_max_ms=LAG_MS)
    assert proposal == IsrProposal((1, 2), 5)
    assert counted(s) == (1, 2, 3)
    assert not s.update_high_watermark(9)
    assert s.high_watermark == 3
    s.on_committed((1, 2), 6)
    assert s.pending is None and counted(s) == (1, 2)
    assert s.update_high_watermark(9)
    assert s.high_watermark == 9


def test_one_proposal_at_a_time() -> None:
    s = leader(isr=(1, 2, 3), now_ms=0)
    assert s.isr_change(0, now_ms=500, lag_max_ms=LAG_MS) is not None
    assert s.isr_change(0, now_ms=600, lag_max_ms=LAG_MS) is None


def test_a_refused_proposal_falls_back_to_the_committed_isr_and_may_be_made_again() -> None:
    s = leader(isr=(1, 2))
    s.on_follower_fetch(3, 0, leader_end_offset=0, now_ms=1)
    first = s.isr_change(0, now_ms=2, lag_max_ms=LAG_MS)
    assert first is not None
    s.proposal_failed()
    assert s.pending is None and counted(s) == (1, 2)
    again = s.isr_change(0, now_ms=3, lag_max_ms=LAG_MS)
    assert again == first and again is not first


def test_on_committed_with_the_state_already_known_keeps_the_proposal() -> None:
    s = leader(isr=(1, 2))
    s.on_follower_fetch(3, 0, leader_end_offset=0, now_ms=1)
    proposal = s.isr_change(0, now_ms=2, lag_max_ms=LAG_MS)
    s.on_committed((1, 2), 5)  # the reconciler runs on every metadata change
    assert s.pending is proposal


def test_on_committed_takes_the_new_state_and_clears_the_proposal() -> None:
    s = leader(isr=(1, 2), now_ms=0)
    s.on_follower_fetch(3, 0, leader_end_offset=0, now_ms=1)
    s.isr_change(0, now_ms=2, lag_max_ms=LAG_MS)
    s.now_ms = 40
    s.on_committed((1, 2, 3), 6)
    assert (s.isr, s.partition_epoch, s.pending) == ((1, 2, 3), 6, None)
    assert s.followers[3].last_caught_up_ms == 1  # its own catch-up time is kept


def test_a_new_member_with_no_catch_up_time_gets_the_commit_time() -> None:
    s = leader(isr=(1, 2), now_ms=40)
    s.on_committed((1, 2, 3), 6)
    assert s.followers[3].last_caught_up_ms == 40


# -- proposals whose outcome is unknown ----------------------------------------------------------


def test_after_an_unknown_outcome_the_proposed_members_keep_counting() -> None:
    """The controller may have committed an expansion whose answer was lost: until a newer
    partition state is known, records must reach the new member before they commit (the
    simulation's seed 95 loses acknowledged records without this)."""
    s = leader(isr=(1, 2))
    s.on_follower_fetch(3, 4, leader_end_offset=4, now_ms=1)
    s.isr_change(4, now_ms=2, lag_max_ms=LAG_MS)
    s.proposal_outcome_unknown()
    assert s.pending is None
    assert counted(s) == (1, 2, 3)
    s.on_follower_fetch(2, 9, leader_end_offset=9, now_ms=3)
    assert s.high_watermark == 4
    # Meanwhile a new proposal may be made, and its answer settles the question.
    assert s.isr_change(9, now_ms=4, lag_max_ms=LAG_MS) == IsrProposal((1, 2, 3), 5)
    s.on_committed((1, 2, 3), 6)
    assert s.unconfirmed is None and counted(s) == (1, 2, 3)


def test_an_unconfirmed_member_stops_counting_once_a_newer_state_is_known() -> None:
    s = leader(isr=(1, 2))
    s.on_follower_fetch(3, 4, leader_end_offset=4, now_ms=1)
    s.isr_change(4, now_ms=2, lag_max_ms=LAG_MS)
    s.proposal_outcome_unknown()
    s.on_committed((1, 2), 6)  # decided without 3 (or overtaken): 3 is not in the ISR
    assert s.unconfirmed is None and counted(s) == (1, 2)
    assert s.on_follower_fetch(2, 9, leader_end_offset=9, now_ms=3)
    assert s.high_watermark == 9


def test_a_definite_refusal_does_not_clear_an_earlier_unknown_outcome() -> None:
    """An earlier request the leader gave up on may still reach the controller and commit at
    the same partition epoch; only a newer partition epoch rules that out."""
    s = leader(isr=(1, 2))
    s.on_follower_fetch(3, 4, leader_end_offset=4, now_ms=1)
    s.isr_change(4, now_ms=2, lag_max_ms=LAG_MS)
    s.proposal_outcome_unknown()
    s.isr_change(4, now_ms=3, lag_max_ms=LAG_MS)
    s.proposal_failed()
    assert counted(s) == (1, 2, 3)


def test_unknown_outcomes_at_one_partition_epoch_accumulate() -> None:
    s = leader(isr=(1,))
    s.pending = IsrProposal((1, 2), 5)
    s.proposal_outcome_unknown()
    s.pending = IsrProposal((1, 3), 5)
    s.proposal_outcome_unknown()
    assert s.unconfirmed == IsrProposal((1, 2, 3), 5)
    assert counted(s) == (1, 2, 3)


def test_an_unknown_outcome_with_nothing_pending_changes_nothing() -> None:
    s = leader(isr=(1, 2))
    s.proposal_outcome_unknown()
    assert s.unconfirmed is None and counted(s) == (1, 2)


def test_an_isr_member_fetching_below_the_high_watermark_is_removed_at_once() -> None:
    """It lost committed records (a replica that cut a damaged batch): keeping it in the ISR
    would let an election pick a copy that misses them."""
    s = leader()
    s.on_follower_fetch(2, 50, 50, now_ms=1)
    s.on_follower_fetch(3, 50, 50, now_ms=1)
    assert s.high_watermark == 50
    s.on_follower_fetch(2, 20, 50, now_ms=2)  # well within the lag window
    proposal = s.isr_change(50, now_ms=3, lag_max_ms=LAG_MS)
    assert proposal is not None and proposal.isr == (1, 3)
    assert s.high_watermark == 50  # and it never moves back


def test_a_follower_removed_from_the_isr_rejoins_only_on_a_fetch_made_since() -> None:
    """After it left the ISR (by its own request, to cut a damaged copy) the offset it
    fetched from before proves nothing about its log."""
    s = leader()
    s.on_follower_fetch(2, 50, 50, now_ms=1)
    s.on_follower_fetch(3, 50, 50, now_ms=1)
    s.on_committed((1, 3), 6)  # replica 2 asked to leave
    assert s.isr_change(50, now_ms=2, lag_max_ms=LAG_MS) is None  # no stale re-add
    s.on_follower_fetch(2, 30, 50, now_ms=3)  # re-fetching after its cut
    assert s.isr_change(50, now_ms=4, lag_max_ms=LAG_MS) is None
    s.on_follower_fetch(2, 50, 50, now_ms=5)  # caught up again
    proposal = s.isr_change(50, now_ms=6, lag_max_ms=LAG_MS)
    assert proposal is not None and proposal.isr == (1, 2, 3)


def test_a_fetch_request_that_arrived_before_the_follower_left_the_isr_proves_nothing() -> None:
    """A long poll parked on the leader re-reads when data arrives: its fetch offset dates
    from before the follower left the ISR (and cut its damaged log), so it must not put the
    follower back."""
    s = leader()
    s.on_follower_fetch(2, 50, 50, now_ms=1)
    s.on_follower_fetch(3, 50, 50, now_ms=1)
    s.on_committed((1, 3), 6, now_ms=10)
    s.on_follower_fetch(2, 50, 50, now_ms=12, request_arrived_ms=5)  # parked since 5
    assert s.isr_change(50, now_ms=13, lag_max_ms=LAG_MS) is None
    s.on_follower_fetch(2, 50, 50, now_ms=14, request_arrived_ms=14)  # a fresh request
    proposal = s.isr_change(50, now_ms=15, lag_max_ms=LAG_MS)
    assert proposal is not None and proposal.isr == (1, 2, 3)


# -- reassignment ------------------------------------------------------------------------------


def test_a_replica_added_by_a_reassignment_is_followed_and_proposed_once_caught_up() -> None:
    """A move changes the replica set within one leadership: the new replica's fetches
    count from then on (and it joins the ISR once caught up), a removed one's no longer."""
    s = leader(high_watermark=10, epoch_start_offset=0)
    assert not s.on_follower_fetch(4, 10, leader_end_offset=10, now_ms=1)  # not a replica yet
    s.on_replicas((2, 3, 4, 1))
    s.on_follower_fetch(4, 10, leader_end_offset=10, now_ms=2)
    proposal = s.isr_change(10, now_ms=2, lag_max_ms=LAG_MS)
    assert proposal is not None and proposal.isr == (1, 2, 3, 4)
    s.on_committed((1, 2, 3, 4), 6, now_ms=3)
    s.on_replicas((1, 2, 4))
    assert 3 not in s.followers
