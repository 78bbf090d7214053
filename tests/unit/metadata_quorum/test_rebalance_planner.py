"""The rebalance planner: a new broker gets its share, bytes and preferred leaders even
out, racks are respected, dead brokers are left alone, and the plan is deterministic."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.metadata_quorum.rebalance_planner import PartitionLoad, plan_rebalance


def _apply(parts: list[PartitionLoad], moves: list[PartitionLoad]) -> list[PartitionLoad]:
    new = {(m.topic, m.partition): m for m in moves}
    return [new.get((p.topic, p.partition), p) for p in parts]


def _counts(parts: list[PartitionLoad], brokers: list[int]) -> dict[int, int]:
    c = Counter(b for p in parts for b in p.replicas)
    return {b: c[b] for b in brokers}


def test_a_fourth_broker_receives_its_share_of_replicas_and_leaders() -> None:
    parts = [PartitionLoad("t", i, (1, 2, 3)[i % 3 :] + (1, 2, 3)[: i % 3], 100) for i in range(12)]
    brokers = {1: None, 2: None, 3: None, 4: None}
    plan = plan_rebalance(brokers, parts)
    after = _apply(parts, plan.moves)
    assert _counts(after, [1, 2, 3, 4]) == {1: 9, 2: 9, 3: 9, 4: 9}
    assert plan.copies == 9
    leaders = Counter(p.replicas[0] for p in after)
    assert max(leaders.values()) - min(leaders[b] for b in brokers) <= 1
    assert all(len(set(p.replicas)) == 3 for p in after)


def test_bytes_even_out_when_replica_counts_already_are() -> None:
    parts = [
        PartitionLoad("big", 0, (1,), 1000),
        PartitionLoad("big", 1, (1,), 1000),
        PartitionLoad("small", 0, (2,), 10),
        PartitionLoad("small", 1, (2,), 10),
    ]
    plan = plan_rebalance({1: None, 2: None}, parts)
    after = _apply(parts, plan.moves)
    on = {b: sum(p.size_bytes for p in after if b in p.replicas) for b in (1, 2)}
    assert on == {1: 1010, 2: 1010}


def test_racks_are_never_doubled_up() -> None:
    brokers = {1: "a", 2: "b", 3: "a", 4: "b"}
    parts = [PartitionLoad("t", i, (1, 2), 1) for i in range(8)]
    after = _apply(parts, plan_rebalance(brokers, parts).moves)
    assert all(len({brokers[b] for b in p.replicas}) == 2 for p in after)
    assert _counts(after, [1, 2, 3, 4]) == {1: 4, 2: 4, 3: 4, 4: 4}


def test_replicas_on_brokers_outside_the_list_stay_and_a_balanced_cluster_is_left_alone() -> None:
    parts = [PartitionLoad("t", 0, (1, 9), 5), PartitionLoad("t", 1, (2, 9), 5)]
    plan = plan_rebalance({1: None, 2: None}, parts)
    assert plan.moves == [] and plan.copies == 0


def test_max_moves_bounds_the_copies() -> None:
    parts = [PartitionLoad("t", i, (1,), 1) for i in range(10)]
    assert plan_rebalance({1: None, 2: None}, parts, max_moves=2).copies == 2


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 6), st.integers(1, 40), st.integers(1, 3), st.integers(0, 2**32))
def test_any_cluster_ends_within_one_replica_and_the_plan_is_deterministic(
    n: int, count: int, rf: int, seed: int
) -> None:
    rng = random.Random(seed)
    ids = list(range(1, n + 1))
    rf = min(rf, n)
    parts = [
        PartitionLoad("t", i, tuple(rng.sample(ids[: max(rf, n - 1)], rf)), rng.randrange(1000))
        for i in range(count)
    ]
    brokers: dict[int, str | None] = dict.fromkeys(ids)
    plan = plan_rebalance(brokers, parts)
    assert plan == plan_rebalance(brokers, list(parts))
    after = _apply(parts, plan.moves)
    counts = _counts(after, ids)
    assert max(counts.values()) - min(counts.values()) <= 1
    assert all(len(set(p.replicas)) == len(p.replicas) for p in after)
    assert sorted(len(p.replicas) for p in after) == sorted(len(p.replicas) for p in parts)
