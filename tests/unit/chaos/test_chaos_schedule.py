"""The fault schedule: deterministic per seed, within its budget and its time bounds."""

from __future__ import annotations

import itertools

import pytest

from rillet.chaos.schedule import (
    DEFAULT_FAULTS,
    FAULT_KINDS,
    PARTITION_MODES,
    FaultStep,
    Timing,
    build_schedule,
    minority,
    parse_faults,
)


def test_the_same_seed_gives_the_same_schedule() -> None:
    a = build_schedule(42, DEFAULT_FAULTS, 60, 3, 6)
    b = build_schedule(42, DEFAULT_FAULTS, 60, 3, 6)
    assert a == b
    assert a.to_json() == b.to_json()
    assert len(a.steps) >= 5


def test_different_seeds_give_different_schedules() -> None:
    schedules = {
        str(build_schedule(seed, DEFAULT_FAULTS, 60, 3, 6).to_json()) for seed in range(20)
    }
    assert len(schedules) == 20


def test_the_schedule_does_not_depend_on_the_global_random_state() -> None:
    import random

    random.seed(1)
    a = build_schedule(7, DEFAULT_FAULTS, 60, 5, 6)
    random.seed(2)
    assert build_schedule(7, DEFAULT_FAULTS, 60, 5, 6) == a


def _max_overlap(steps: list[FaultStep]) -> int:
    events = sorted([(s.start_s, 1) for s in steps] + [(s.heal_s, -1) for s in steps])
    # At equal times the heal (-1) sorts first: a heal and a start at the same instant
    # do not overlap.
    active = peak = 0
    for _, delta in events:
        active += delta
        peak = max(peak, active)
    return peak


@pytest.mark.parametrize("nodes", [1, 3, 5, 7])
def test_never_more_than_a_minority_down_at_once(nodes: int) -> None:
    for seed in range(30):
        schedule = build_schedule(seed, DEFAULT_FAULTS, 120, nodes, 6)
        assert schedule.max_down == minority(nodes)
        assert _max_overlap(schedule.steps) <= minority(nodes)
        if nodes == 1:
            assert schedule.steps == []  # one node has no minority to lose


def test_with_three_nodes_faults_never_overlap_and_leave_a_recovery_gap() -> None:
    timing = Timing()
    for seed in range(30):
        steps = build_schedule(seed, DEFAULT_FAULTS, 60, 3, 6).steps
        for before, after in itertools.pairwise(steps):
            assert after.start_s >= before.heal_s + timing.min_gap_s - 1e-3


def test_every_fault_is_healed_within_its_window_before_the_end() -> None:
    timing = Timing()
    for seed in range(30):
        schedule = build_schedule(seed, DEFAULT_FAULTS, 60, 5, 6)
        for s in schedule.steps:
            assert s.start_s >= timing.warmup_s
            assert timing.min_window_s - 1e-3 <= s.heal_s - s.start_s <= timing.max_window_s + 1e-3
            assert s.heal_s <= 60 - timing.cooldown_s + 1e-3


def test_more_than_a_minority_only_when_asked() -> None:
    with pytest.raises(ValueError, match="majority"):
        build_schedule(1, DEFAULT_FAULTS, 60, 3, 6, max_down=2)
    schedule = build_schedule(1, DEFAULT_FAULTS, 120, 3, 6, max_down=3, allow_majority=True)
    assert schedule.max_down == 3
    assert any(
        _max_overlap(
            build_schedule(s, DEFAULT_FAULTS, 120, 3, 6, max_down=3, allow_majority=True).steps
        )
        > 1
        for s in range(10)
    )


def test_steps_only_use_the_kinds_asked_for_and_draw_their_targets() -> None:
    schedule = build_schedule(3, ("pause", "restart-corrupt-tail"), 120, 3, 4)
    assert {s.kind for s in schedule.steps} == {"pause", "restart-corrupt-tail"}
    for s in schedule.steps:
        if s.kind == "restart-corrupt-tail":
            assert s.target == "node" and s.node in (1, 2, 3)
            assert s.params["mode"] in ("truncate", "flip")
            assert 1 <= s.params["partitions"] <= 4 and 1 <= s.params["bytes"] <= 64
        else:
            assert s.target in ("raft-leader", "partition-leader", "node")
            assert (s.node is not None) == (s.target == "node")
            assert (s.partition is not None) == (s.target == "partition-leader")


def test_parse_faults() -> None:
    assert parse_faults("kill-leader, pause,kill-leader") == ("kill-leader", "pause")
    assert parse_faults("all") == DEFAULT_FAULTS
    with pytest.raises(ValueError, match="unknown"):
        parse_faults("kill-everything")
    assert parse_faults("kill-leader,partition") == ("kill-leader", "partition")
    with pytest.raises(ValueError):
        parse_faults(" , ")


def test_network_partitions_draw_a_mode_and_a_leader_or_node_target() -> None:
    assert FAULT_KINDS["partition"].available and "partition" in DEFAULT_FAULTS
    steps = build_schedule(1, ("partition",), 120, 3, 6).steps
    assert steps
    assert {s.params["mode"] for s in steps} <= set(PARTITION_MODES)
    assert all(s.target in ("raft-leader", "partition-leader", "node") for s in steps)
    assert build_schedule(1, ("partition",), 120, 3, 6) == build_schedule(
        1, ("partition",), 120, 3, 6
    )


def test_describe_names_the_target() -> None:
    steps = build_schedule(5, DEFAULT_FAULTS, 60, 3, 6).steps
    text = " | ".join(s.describe() for s in steps)
    assert "at " in text and "for " in text
    assert "seed=" not in text  # the corruption seed is an implementation detail


def test_power_and_disk_kinds_are_opt_in_and_draw_their_parameters() -> None:
    from rillet.chaos.schedule import DISK_FAULTS

    assert not set(DISK_FAULTS) & set(DEFAULT_FAULTS)  # published seeds replay unchanged
    steps = build_schedule(7, DISK_FAULTS, 120.0, 3, 6).steps
    assert {s.kind for s in steps} == set(DISK_FAULTS)
    for s in steps:
        if s.kind == "disk-slow":
            assert 1000 <= s.params["slow_fsync_ms"] <= 2000
        elif s.kind in ("disk-eio", "disk-full"):
            assert s.params["where"] in ("partition", "raft") and 0 <= s.params["partition"] < 6
        assert ("op" in s.params) == (s.kind == "disk-eio")
