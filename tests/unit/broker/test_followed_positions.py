"""A follower fetch loop recomputes only the positions that may have moved, and all of them
after a reconciliation or once FULL_ROUND_MS has passed (real replicas on real files)."""

from __future__ import annotations

from pathlib import Path

from broker_context import middle

from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replication.followed_positions import FULL_ROUND_MS, FollowedPositions

MAX_BYTES = 1 << 20


def _followers(tmp_path: Path, count: int) -> list[PartitionReplica]:
    m = middle(tmp_path)
    return [m.host("t", p, leader=2, isr=(2, 1), replicas=(2, 1)) for p in range(count)]


async def test_a_rebuild_computes_every_position_and_the_next_fetch_compares_them_all(
    tmp_path: Path,
) -> None:
    replicas = _followers(tmp_path, 3)
    positions = FollowedPositions(MAX_BYTES)
    assert positions.needs_rebuild(generation=1, now_ms=0)
    positions.rebuild(replicas, generation=1, now_ms=0)
    assert len(positions) == 3 and sorted(positions.positions) == [("t", 0), ("t", 1), ("t", 2)]
    assert positions.take_moved() is None  # after a rebuild: compare them all
    assert positions.take_moved() == []  # then only what moved
    assert not positions.needs_rebuild(generation=1, now_ms=FULL_ROUND_MS - 1)


async def test_only_positions_marked_as_moved_are_recomputed(tmp_path: Path) -> None:
    replicas = _followers(tmp_path, 3)
    positions = FollowedPositions(MAX_BYTES)
    positions.rebuild(replicas, generation=1, now_ms=0)
    positions.take_moved()
    before = dict(positions.positions)
    replicas[1].log.truncate_fully_and_start_at(500)
    positions.mark_moved(("t", 1))
    assert positions.take_moved() == [("t", 1)]
    assert positions.positions[("t", 1)].fetch_offset == 500
    assert positions.sent[("t", 1)].fetch_offset == 500
    assert positions.sent[("t", 1)].log_truncations == replicas[1].log.truncations
    assert positions.positions[("t", 0)] is before[("t", 0)]
    assert positions.positions[("t", 2)] is before[("t", 2)]


async def test_an_unmarked_change_is_found_by_the_next_full_round(tmp_path: Path) -> None:
    replicas = _followers(tmp_path, 2)
    positions = FollowedPositions(MAX_BYTES)
    positions.rebuild(replicas, generation=1, now_ms=0)
    positions.take_moved()
    replicas[0].log.truncate_fully_and_start_at(70)  # e.g. by something other than the loop
    assert positions.take_moved() == []
    assert positions.positions[("t", 0)].fetch_offset == 0
    assert positions.needs_rebuild(generation=1, now_ms=FULL_ROUND_MS)
    positions.rebuild(replicas, generation=1, now_ms=FULL_ROUND_MS)
    assert positions.positions[("t", 0)].fetch_offset == 70


async def test_a_reconciliation_or_an_invalidation_asks_for_a_rebuild(tmp_path: Path) -> None:
    replicas = _followers(tmp_path, 2)
    positions = FollowedPositions(MAX_BYTES)
    positions.rebuild(replicas, generation=1, now_ms=0)
    assert positions.needs_rebuild(generation=2, now_ms=0)
    positions.rebuild(replicas[:1], generation=2, now_ms=0)
    assert sorted(positions.positions) == [("t", 0)]  # exactly the replicas given
    positions.mark_moved(("t", 1))  # no longer followed: ignored
    positions.take_moved()
    assert positions.take_moved() == []
    positions.invalidate()
    assert positions.needs_rebuild(generation=2, now_ms=0)


async def test_a_rebuild_in_steps_yields_once_per_partition_and_ends_as_one_rebuild(
    tmp_path: Path,
) -> None:
    """The fetch loop drives the rebuild step by step (yielding to the event loop between
    slices of them); the result is the same as a rebuild in one piece."""
    replicas = _followers(tmp_path, 4)
    whole, stepped = FollowedPositions(MAX_BYTES), FollowedPositions(MAX_BYTES)
    whole.rebuild(replicas, generation=3, now_ms=0)
    steps = stepped.rebuild_steps(replicas, generation=3, now_ms=0)
    assert sum(1 for _ in steps) == 4
    assert stepped.positions == whole.positions and stepped.sent == whole.sent
    assert not stepped.needs_rebuild(generation=3, now_ms=0)
    assert stepped.take_moved_keys() is None  # a full round follows, as after rebuild()
    replicas[2].log.truncate_fully_and_start_at(9)
    stepped.mark_moved(("t", 2))
    assert stepped.take_moved_keys() == [("t", 2)]
    assert stepped.positions[("t", 2)].fetch_offset == 0  # until recomputed
    stepped.recompute(("t", 2))
    assert stepped.positions[("t", 2)].fetch_offset == 9
