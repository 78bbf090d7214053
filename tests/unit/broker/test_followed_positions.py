"""A follower fetch loop recomputes only the positions that may have moved, and all of them
after a reconciliation or once FULL_ROUND_MS has passed (real replicas on real files)."""

from __future__ import annotations

from pathlib import Path

from broker_context import middle

from rillet.broker.partition_replica import PartitionReplica
from rillet.broker.replication.followed_positions import FULL_ROUND_MS, FollowedPositions

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
