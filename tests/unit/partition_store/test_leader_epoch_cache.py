"""The leader-epoch cache answers "where did epoch E end?" the way Kafka's does, survives a
round trip through its checkpoint, and follows truncation at both ends."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.partition_store.leader_epoch_cache import (
    UNDEFINED_EPOCH,
    UNDEFINED_OFFSET,
    EpochEntry,
    LeaderEpochCache,
    LeaderEpochError,
)


def cache(*pairs: tuple[int, int]) -> LeaderEpochCache:
    return LeaderEpochCache([EpochEntry(e, o) for e, o in pairs])


def test_end_offset_for_each_kind_of_epoch() -> None:
    c = cache((1, 0), (3, 10), (4, 25))
    assert c.end_offset_for(4, 40) == (4, 40)  # latest: the log end
    assert c.end_offset_for(3, 40) == (3, 25)  # ended where epoch 4 began
    assert c.end_offset_for(2, 40) == (1, 10)  # unknown here: the floor epoch, next start
    assert c.end_offset_for(0, 40) == (0, 0)  # older than anything: ends at the first start
    assert c.end_offset_for(5, 40) == (UNDEFINED_EPOCH, UNDEFINED_OFFSET)
    assert cache().end_offset_for(1, 0) == (UNDEFINED_EPOCH, UNDEFINED_OFFSET)


def test_assign_is_monotonic_and_idempotent() -> None:
    c = cache((1, 0))
    assert not c.assign(1, 7)  # more batches of the same epoch
    assert c.assign(2, 7)
    with pytest.raises(LeaderEpochError):
        c.assign(1, 9)
    with pytest.raises(LeaderEpochError):
        c.assign(3, 5)
    assert c.assign(5, 7)  # epoch 2 wrote nothing: superseded at the same offset
    assert c.entries == [EpochEntry(1, 0), EpochEntry(5, 7)]


def test_truncation_at_both_ends() -> None:
    c = cache((1, 0), (2, 10), (3, 20))
    c.truncate_from_end(20)
    assert c.latest_epoch() == 2
    c.truncate_from_start(15)
    assert c.entries == [EpochEntry(2, 15)]
    c2 = cache((1, 0), (2, 10))
    c2.truncate_from_start(5)
    assert c2.entries == [EpochEntry(1, 5), EpochEntry(2, 10)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 50)), max_size=20))
def test_checkpoint_round_trip(steps: list[tuple[int, int]]) -> None:
    c = LeaderEpochCache()
    epoch, offset = 0, 0
    for de, do in steps:
        epoch, offset = epoch + de, offset + do
        c.assign(epoch, offset)
    assert LeaderEpochCache.decode(c.encode()).entries == c.entries


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=60))
def test_damaged_checkpoints_are_typed_errors(data: bytes) -> None:
    try:
        LeaderEpochCache.decode(data)
    except LeaderEpochError:
        pass
