"""The decision core behind abandoning requests to a leader that stopped answering."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rillet.client.leader_watch import SUSPECT_S, TP, LeaderWatch, leader_moved

A, B = ("t", 0), ("t", 1)


def test_a_request_moves_on_a_new_leader_or_a_newer_epoch_only() -> None:
    assert leader_moved(sent_to=1, sent_epoch=3, leader=2, epoch=4)
    assert leader_moved(sent_to=1, sent_epoch=3, leader=2, epoch=3)  # a lagging epoch, new node
    assert leader_moved(sent_to=1, sent_epoch=3, leader=1, epoch=4)  # re-elected: resend
    assert leader_moved(sent_to=1, sent_epoch=3, leader=None, epoch=4)  # replaced, none yet
    assert not leader_moved(sent_to=1, sent_epoch=3, leader=1, epoch=3)
    # Marked stale by the client itself (no leader, same epoch): not a move.
    assert not leader_moved(sent_to=1, sent_epoch=3, leader=None, epoch=3)


def test_refreshes_start_after_the_stall_threshold_and_back_off_to_it() -> None:
    watch = LeaderWatch(leader_check_s=0.5, first_backoff_s=0.1)
    assert watch.next_refresh_at() is None
    watch.watch(1, {A: 3}, now_s=10.0, on_moved=lambda tps: None, expected_wait_s=0.5)
    assert watch.next_refresh_at() == pytest.approx(11.0)  # sent + expected + threshold
    assert watch.stalled_nodes(10.9) == set() and watch.stalled_nodes(11.0) == {1}
    assert watch.stalled_topics(11.0) == {"t"}
    now, gaps = 11.0, []
    for _ in range(6):
        watch.refreshed(now)
        due = watch.next_refresh_at()
        assert due is not None
        gaps.append(round(due - now, 3))
        now = due
    # Bounded: never more often, never slower (a new leader is seen within 250 ms).
    assert gaps == [0.1, 0.2, 0.25, 0.25, 0.25, 0.25]


def test_moved_partitions_are_reported_once_and_only_theirs() -> None:
    watch = LeaderWatch(leader_check_s=0.5)
    reported: list[list[TP]] = []
    token = watch.watch(1, {A: 3, B: 3}, 0.0, reported.append)
    leaders = {A: (1, 3), B: (1, 3)}
    assert watch.moved(leaders.__getitem__, 0.1) == []
    leaders[A] = (2, 4)  # the controller moved A; B still led by node 1
    for on_moved, tps in watch.moved(leaders.__getitem__, 0.1):
        on_moved(tps)
    assert reported == [[A]]
    assert watch.moved(leaders.__getitem__, 0.1) == []  # not twice
    assert len(watch) == 1  # still waiting for B
    leaders[B] = (3, 5)
    for on_moved, tps in watch.moved(leaders.__getitem__, 0.1):
        on_moved(tps)
    assert reported == [[A], [B]] and len(watch) == 0
    watch.unwatch(token)  # harmless after it was forgotten


def test_a_move_resets_the_backoff_and_finished_requests_stop_refreshes() -> None:
    watch = LeaderWatch(leader_check_s=0.8, first_backoff_s=0.1)
    token = watch.watch(1, {A: 0}, 0.0, lambda tps: None)
    other = watch.watch(1, {B: 0}, 0.0, lambda tps: None)
    for now in (0.8, 0.9, 1.1):
        watch.refreshed(now)
    assert watch.next_refresh_at() == pytest.approx(1.35)  # backing off by 0.25 (the most)
    watch.moved(lambda tp: (2, 1) if tp == A else (1, 0), 1.2)
    watch.refreshed(2.0)
    assert watch.next_refresh_at() == pytest.approx(2.1)  # back to the first backoff
    watch.unwatch(token)
    watch.unwatch(other)
    assert watch.next_refresh_at() is None


def test_a_request_about_no_partition_is_not_watched() -> None:
    watch = LeaderWatch(leader_check_s=0.5)
    watch.watch(1, {}, 0.0, lambda tps: None)
    assert len(watch) == 0 and watch.next_refresh_at() is None


def test_the_threshold_must_be_positive() -> None:
    with pytest.raises(ValueError, match="leader_check_ms"):
        LeaderWatch(leader_check_s=0)


def test_a_node_whose_stalled_request_was_abandoned_stays_avoided_for_a_while() -> None:
    watch = LeaderWatch(leader_check_s=0.5)
    watch.watch(1, {A: 0}, 0.0, lambda tps: None)
    watch.watch(2, {B: 0}, 0.0, lambda tps: None)
    watch.moved(lambda tp: (3, 1), now_s=0.2)  # both moved before they stalled
    assert watch.stalled_nodes(0.2) == set()
    watch.watch(1, {A: 1}, 1.0, lambda tps: None)
    watch.moved(lambda tp: (3, 2), now_s=2.0)  # stalled since 1.5, then abandoned
    assert len(watch) == 0
    assert watch.stalled_nodes(2.0) == {1}  # it still answers nothing
    assert watch.stalled_nodes(2.0 + SUSPECT_S) == set()


def test_moves_are_reported_newest_request_first() -> None:
    """A producer puts abandoned batches back at the front of their queue: the newest goes
    back first, so the oldest ends up in front, where it was."""
    watch = LeaderWatch(leader_check_s=0.5)
    order: list[str] = []
    watch.watch(1, {A: 0}, 0.0, lambda tps: order.append("older"))
    watch.watch(1, {A: 0}, 0.1, lambda tps: order.append("newer"))
    for on_moved, tps in watch.moved(lambda tp: (2, 1), 1.0):
        on_moved(tps)
    assert order == ["newer", "older"]


@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["watch", "unwatch", "move", "refresh"]),
            st.integers(0, 3),  # a partition, or which registration to end
            st.floats(0.0, 2.0),  # time passing before the step
        ),
        max_size=60,
    )
)
def test_each_move_is_reported_once_and_refreshes_never_come_too_often(
    steps: list[tuple[str, int, float]],
) -> None:
    watch = LeaderWatch(leader_check_s=0.5, first_backoff_s=0.1)
    leaders: dict[TP, tuple[int, int]] = {("t", p): (0, 0) for p in range(4)}
    reported: list[list[TP]] = []
    tokens: list[int] = []

    now = 0.0
    for action, n, dt in steps:
        now += dt
        tp = ("t", n)
        if action == "watch":
            mine: list[TP] = []
            reported.append(mine)
            node, epoch = leaders[tp]
            tokens.append(watch.watch(node, {tp: epoch}, now, mine.extend))
        elif action == "unwatch" and tokens:
            watch.unwatch(tokens[n % len(tokens)])
        elif action == "move":
            node, epoch = leaders[tp]
            leaders[tp] = ((node + 1) % 3, epoch + 1)
            for on_moved, tps in watch.moved(leaders.__getitem__, now):
                on_moved(tps)
        else:
            watch.refreshed(now)
            due = watch.next_refresh_at()
            assert due is None or due - now >= 0.1 - 1e-9  # at most ten refreshes a second
    assert all(len(tps) <= 1 for tps in reported)  # each request was about one partition
    assert len(watch) <= len(tokens)
