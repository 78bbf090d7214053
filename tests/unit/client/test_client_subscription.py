"""Consumer positions: take() advances them fairly, seeks drop buffered data."""

from __future__ import annotations

from rillet.client.subscription import Subscription
from rillet.client.types import ConsumerRecord, TopicPartition

A, B = TopicPartition("t", 0), TopicPartition("t", 1)


def fill(sub: Subscription, tp: TopicPartition, first: int, n: int) -> None:
    s = sub.state(tp)
    s.records = [
        ConsumerRecord(tp.topic, tp.partition, first + i, 0, None, b"", []) for i in range(n)
    ]
    s.read_index = 0
    s.fetch_offset = first + n


def test_take_advances_positions_and_rotates_between_partitions() -> None:
    sub = Subscription()
    sub.assign([A, B])
    fill(sub, A, 10, 5)
    fill(sub, B, 0, 5)
    got = sub.take(3)
    assert [(r.partition, r.offset) for r in got] == [(0, 10), (0, 11), (0, 12)]
    assert sub.state(A).position == 13
    got = sub.take(3)  # B's turn first now
    assert [(r.partition, r.offset) for r in got] == [(1, 0), (1, 1), (1, 2)]
    rest = sub.take(None)
    assert sorted((r.partition, r.offset) for r in rest) == [(0, 13), (0, 14), (1, 3), (1, 4)]
    assert not sub.has_buffered()
    assert (sub.state(A).position, sub.state(B).position) == (15, 5)


def test_seek_and_reset_drop_buffered_records_and_bump_the_epoch() -> None:
    sub = Subscription()
    sub.assign([A])
    fill(sub, A, 0, 3)
    s = sub.state(A)
    epoch = s.epoch
    s.set_position(100)
    assert (s.position, s.fetch_offset, s.buffered, s.epoch) == (100, 100, 0, epoch + 1)
    s.request_reset(-2)
    assert s.position is None and sub.resets_needed(-1) == {A: -2}
    s.reset_to = None
    assert sub.resets_needed(-1) == {A: -1} and sub.resets_needed(None) == {A: None}


def test_reassignment_keeps_positions_of_kept_partitions() -> None:
    sub = Subscription()
    sub.assign([A, B])
    sub.state(A).set_position(7)
    sub.assign([("t", 0)])
    assert set(sub.states) == {A} and sub.state(A).position == 7
