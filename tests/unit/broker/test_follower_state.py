"""The follower-side decisions (broker/replica/replication/follower_state.py), with the real
LeaderEpochCache on both sides, as the replica fetcher uses them.

The point of the divergence rules (KIP-101/279): a follower never keeps a suffix its leader
does not have, and never cuts below the point where their histories actually part, which
would throw away records the leader may already count as committed.
"""

from __future__ import annotations

from rillet.broker.replica.replication.follower_state import (
    OutOfRangeStep,
    divergence_truncation_offset,
    plan_out_of_range,
)
from rillet.partition_store.leader_epoch_cache import EpochEntry, LeaderEpochCache
from rillet.wire.error_codes import ErrorCode


def cache(*entries: tuple[int, int]) -> LeaderEpochCache:
    return LeaderEpochCache([EpochEntry(e, o) for e, o in entries])


def cut(
    follower: LeaderEpochCache, follower_end: int, leader_epoch: int, leader_offset: int
) -> int:
    def own_end(epoch: int) -> tuple[int, int]:
        return follower.end_offset_for(epoch, follower_end)

    return divergence_truncation_offset(leader_epoch, leader_offset, own_end, follower_end)


# -- divergence ----------------------------------------------------------------------------------


def test_cuts_where_the_leaders_epoch_ended_when_the_follower_went_on_longer() -> None:
    # The follower has epoch 2 up to 15; the leader's epoch 2 ended at 12.
    assert cut(cache((0, 0), (2, 10)), 15, leader_epoch=2, leader_offset=12) == 12


def test_cuts_where_the_followers_own_history_of_the_epoch_ends_if_earlier() -> None:
    """KIP-279: the leader's epoch 1 ran to 10, but the follower's epoch 1 ended at 8 (it
    then took epoch-3 records from a leader that lost them): everything from 8 goes."""
    assert cut(cache((0, 0), (1, 5), (3, 8)), 12, leader_epoch=1, leader_offset=10) == 8


def test_an_epoch_the_follower_never_had_is_read_as_its_largest_epoch_below() -> None:
    # The leader answers for epoch 2; the follower only knows 0 and 3, so epoch 0 (ending at
    # 6, where its epoch 3 began) is where the histories can still agree.
    assert cut(cache((0, 0), (3, 6)), 9, leader_epoch=2, leader_offset=10) == 6


def test_an_epoch_older_than_anything_the_follower_has_ends_at_its_first_epoch() -> None:
    assert cut(cache((3, 5)), 9, leader_epoch=1, leader_offset=9) == 5


def test_without_a_common_epoch_the_leaders_offset_is_the_floor() -> None:
    """The leader sends its high watermark when it has no epoch to offer: committed, so
    the follower may keep everything below it."""
    assert cut(cache((4, 0)), 10, leader_epoch=-1, leader_offset=7) == 7
    assert cut(cache((4, 0)), 5, leader_epoch=-1, leader_offset=7) == 5


def test_an_empty_follower_cache_takes_the_leaders_offset() -> None:
    assert cut(cache(), 6, leader_epoch=2, leader_offset=4) == 4


def test_never_beyond_the_own_log_end_and_never_below_zero() -> None:
    assert cut(cache((0, 0)), 3, leader_epoch=0, leader_offset=9) == 3
    assert cut(cache((0, 0)), 3, leader_epoch=-1, leader_offset=-1) == 0


def test_a_former_leaders_empty_epoch_is_cut_at_the_log_end() -> None:
    """A leader of epoch 5 that wrote nothing before it was deposed has (5, 10) in its cache;
    the new leader (epoch 6 from 10, no epoch 5) answers (4, 10): cutting at 10 forgets the
    empty epoch, so the next fetch names epoch 4 and matches."""
    follower = cache((0, 0), (4, 3), (5, 10))
    leader = cache((0, 0), (4, 3), (6, 10))
    epoch, end = leader.end_offset_for(5, 14)
    assert (epoch, end) == (4, 10)
    target = cut(follower, 10, epoch, end)
    assert target == 10
    follower.truncate_from_end(target)
    assert follower.latest_epoch() == 4
    assert leader.end_offset_for(4, 14) == (4, 10)  # no longer diverging at offset 10


def test_the_leaders_check_and_the_followers_cut_converge() -> None:
    """KIP-101's scenario: the old leader A wrote epoch-1 batches 10..14 that B never got;
    B led epoch 2 from 10 and wrote 10..12. A, back as follower, fetches at 15 with epoch 1
    (replica_fetch's rule: B's epoch 1 ended at 10 < 15, so it diverges), cuts at 10, and
    from then on fetches B's records."""
    a_cache, a_end = cache((0, 0), (1, 5)), 15
    b_cache, b_end = cache((0, 0), (1, 5), (2, 10)), 13
    epoch, end = b_cache.end_offset_for(a_cache.latest_epoch(), b_end)
    assert epoch < 1 or end < a_end  # diverging
    target = cut(a_cache, a_end, epoch, end)
    assert target == 10
    a_cache.truncate_from_end(target)
    epoch, end = b_cache.end_offset_for(a_cache.latest_epoch(), b_end)
    assert epoch == a_cache.latest_epoch() and end >= target  # in step now


# -- out of range --------------------------------------------------------------------------------


def test_only_offset_out_of_range_changes_the_log() -> None:
    for code in (ErrorCode.NONE, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH):
        assert plan_out_of_range(code, 50, 10, 20) == OutOfRangeStep()


def test_a_follower_past_the_leaders_end_cuts_back_to_it() -> None:
    step = plan_out_of_range(ErrorCode.OFFSET_OUT_OF_RANGE, 25, 0, 20)
    assert step == OutOfRangeStep(truncate_to=20)


def test_a_follower_before_the_leaders_log_start_starts_over_there() -> None:
    step = plan_out_of_range(ErrorCode.OFFSET_OUT_OF_RANGE, 3, 10, 20)
    assert step == OutOfRangeStep(restart_at=10)


def test_past_the_end_wins_over_before_the_start() -> None:
    # An empty leader log started at 10 while the follower holds 0..5: cut back first.
    step = plan_out_of_range(ErrorCode.OFFSET_OUT_OF_RANGE, 5, 10, 0)
    assert step == OutOfRangeStep(truncate_to=0)


def test_in_range_after_all_or_an_unknown_leader_end_means_back_off() -> None:
    assert plan_out_of_range(ErrorCode.OFFSET_OUT_OF_RANGE, 15, 10, 20) == OutOfRangeStep()
    assert plan_out_of_range(ErrorCode.OFFSET_OUT_OF_RANGE, 15, 10, -1) == OutOfRangeStep()
