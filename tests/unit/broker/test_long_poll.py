"""A fetch's long poll (the fetch handler and the replication simulation both run it)."""

from __future__ import annotations

from rillet.broker.replica.replication.follower_fetch_answer import LongPoll


def test_a_long_poll_ends_on_bytes_an_urgent_answer_a_left_over_or_its_deadline() -> None:
    poll = LongPoll(10.0)
    assert not poll.ends(0, 1, answered_at_once=False, now_s=9.99)
    assert poll.ends(1, 1, answered_at_once=False, now_s=0.0)
    assert poll.ends(0, 1, answered_at_once=True, now_s=0.0)
    assert poll.ends(0, 1, answered_at_once=False, now_s=0.0, left_over=True)
    assert poll.ends(0, 1, answered_at_once=False, now_s=10.0)


def test_a_throttled_follower_is_answered_once_its_bytes_may_go() -> None:
    poll = LongPoll(10.0)
    poll.shorten_to(12.0)  # never lengthened
    assert poll.deadline_s == 10.0
    poll.shorten_to(4.0)
    assert not poll.ends(0, 1, answered_at_once=False, now_s=3.9)
    assert poll.ends(0, 1, answered_at_once=False, now_s=4.0)
