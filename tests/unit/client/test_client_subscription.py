"""Consumer positions: take() advances them fairly, seeks drop buffered data."""

from __future__ import annotations

from typing import Any

from rillet.client.buffered_records import BufferedRecords, RecordColumns
from rillet.client.subscription import PartitionState, Subscription
from rillet.client.types import ConsumerRecord, TopicPartition

A, B = TopicPartition("t", 0), TopicPartition("t", 1)


def fill(sub: Subscription, tp: TopicPartition, first: int, n: int) -> None:
    """``n`` records from ``first`` on, in two batches (take() crosses batch ends)."""
    s = sub.state(tp)
    half = n // 2
    batches = [
        RecordColumns(first + lo, [0] * (hi - lo), [None] * (hi - lo), [b""] * (hi - lo), None)
        for lo, hi in ((0, half), (half, n))
        if hi > lo
    ]
    sub.buffer(tp, s, BufferedRecords(tp.topic, tp.partition, batches))
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
    assert sub.take(None) == [] and sub.state(A).buffered == sub.state(B).buffered == 0
    assert (sub.state(A).position, sub.state(B).position) == (15, 5)


def test_a_poll_looks_only_at_partitions_holding_records() -> None:
    """Of many assigned partitions, a poll visits the ones fetched into (a consumer of
    1,000 partitions scanned them all on every poll)."""

    class CountingStates(dict[TopicPartition, PartitionState]):
        looked_up = 0

        def get(self, key: Any, default: Any = None) -> Any:
            CountingStates.looked_up += 1
            return super().get(key, default)

        def values(self) -> Any:
            raise AssertionError("a poll walked every assigned partition")

        def items(self) -> Any:
            raise AssertionError("a poll walked every assigned partition")

    sub = Subscription()
    sub.assign([TopicPartition("t", p) for p in range(1_000)])
    fill(sub, TopicPartition("t", 500), 0, 4)
    sub.states = CountingStates(sub.states)
    assert [r.offset for r in sub.take(3)] == [0, 1, 2]
    assert [r.offset for r in sub.take(3)] == [3]
    assert sub.take(3) == []
    assert CountingStates.looked_up == 2


def test_records_dropped_by_a_seek_or_an_unassignment_are_never_handed_out() -> None:
    sub = Subscription()
    sub.assign([A, B])
    fill(sub, A, 0, 4)
    fill(sub, B, 0, 4)
    sub.state(A).set_position(50)  # A's buffered records go; its queue entry goes stale
    fill(sub, A, 50, 2)  # fetched again: one entry, not two
    sub.assign([A])  # B unassigned with records buffered
    sub.assign([A, B])  # and back, as a new partition state
    assert [(r.partition, r.offset) for r in sub.take(None)] == [(0, 50), (0, 51)]
    fill(sub, B, 9, 1)
    assert [(r.partition, r.offset) for r in sub.take(None)] == [(1, 9)]
    assert sub.take(None) == []


def test_a_paused_partition_keeps_its_records_until_resumed() -> None:
    sub = Subscription()
    sub.assign([A, B])
    fill(sub, A, 0, 2)
    fill(sub, B, 0, 2)
    sub.state(A).paused = True
    assert [(r.partition, r.offset) for r in sub.take(None)] == [(1, 0), (1, 1)]
    assert sub.take(None) == []
    sub.state(A).paused = False
    assert [(r.partition, r.offset) for r in sub.take(None)] == [(0, 0), (0, 1)]


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


def test_buffered_records_are_built_as_taken_across_batches() -> None:
    headers = [[("h", b"1")], ()]
    pending = BufferedRecords(
        "t",
        3,
        [
            RecordColumns(7, [100, 101], [b"k7", None], [b"v7", b"v8"], headers),
            RecordColumns(9, [200], [None], [None], None),
        ],
    )
    assert len(pending) == 3
    assert pending.take(1) == [ConsumerRecord("t", 3, 7, 100, b"k7", b"v7", [("h", b"1")])]
    assert pending.take(5) == [
        ConsumerRecord("t", 3, 8, 101, None, b"v8", ()),
        ConsumerRecord("t", 3, 9, 200, None, None, ()),
    ]
    assert len(pending) == 0 and pending.take(1) == []
