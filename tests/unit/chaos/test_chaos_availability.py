"""Per-partition write gaps: a stall confined to some partitions is reported, with the worst
partition named, while the cluster-wide figure (no ack on any partition) stays small."""

from __future__ import annotations

import pytest

from rillet.chaos.availability import SETTLE_S, availability
from rillet.chaos.history import FaultWindow, History, Write


def steady(h: History, partition: int, start_s: float, end_s: float, every_s: float = 0.1) -> None:
    """Acknowledged writes to ``partition`` every ``every_s`` in [start_s, end_s)."""
    process = f"w{partition}"
    t = start_s
    while t < end_s - 1e-9:
        seq = len(h.writes)
        h.writes.append(Write(process, f"{process}:{seq}", partition, t - 0.005, "ok", t, seq))
        t = round(t + every_s, 6)


def test_a_paused_leader_s_partitions_stall_while_the_others_write() -> None:
    """Six partitions; the paused node led 2 and 5, which stall 10 s from the pause on, while
    the other four acknowledge every 0.1 s throughout (the case issue 16 found invisible)."""
    h = History(meta={"config": {"partitions": 6}})
    for p in range(6):
        if p in (2, 5):
            steady(h, p, 0.0, 5.0)
            steady(h, p, 15.0 if p == 2 else 12.0, 30.0)
        else:
            steady(h, p, 0.0, 30.0)
    h.faults = [FaultWindow(0, "pause", 5.0, 8.0, node=2)]
    (gap,) = availability(h)
    assert gap["longest_partition_gap_s"] == pytest.approx(10.0)  # from the pause (5.0) to 15.0
    assert gap["partition"] == 2
    assert gap["partition_gaps_s"]["5"] == pytest.approx(7.0)
    assert gap["partition_gaps_s"]["0"] == pytest.approx(0.1, abs=0.01)
    assert gap["longest_write_gap_s"] == pytest.approx(0.1, abs=0.01)  # cluster-wide: hidden


def test_a_partition_without_any_ack_is_one_gap_over_the_whole_window() -> None:
    """Partition 3 never acknowledged anything: it is still measured (from the run's
    configuration), not left out for having no writes."""
    h = History(meta={"config": {"partitions": 4}})
    for p in range(3):
        steady(h, p, 0.0, 20.0)
    h.faults = [FaultWindow(0, "kill-partition-leader", 5.0, 7.0, node=1)]
    (gap,) = availability(h)
    assert gap["partition"] == 3
    assert gap["longest_partition_gap_s"] == pytest.approx(2.0 + SETTLE_S)  # start -> heal+settle
    assert set(gap["partition_gaps_s"]) == {"0", "1", "2", "3"}


def test_each_fault_names_its_own_worst_partition() -> None:
    h = History(meta={"config": {"partitions": 3}})
    steady(h, 0, 0.0, 40.0)
    steady(h, 1, 0.0, 5.5)  # stalls for the first fault
    steady(h, 1, 9.0, 40.0)
    steady(h, 2, 0.0, 25.5)  # and partition 2 for the second
    steady(h, 2, 28.0, 40.0)
    h.faults = [
        FaultWindow(0, "kill-partition-leader", 5.0, 6.0, node=1),
        FaultWindow(1, "partition", 25.0, 26.0, node=3),
    ]
    first, second = availability(h)
    assert (first["partition"], second["partition"]) == (1, 2)
    assert first["longest_partition_gap_s"] == pytest.approx(3.6, abs=0.05)  # 5.4 -> 9.0
    assert second["longest_partition_gap_s"] == pytest.approx(2.6, abs=0.05)  # 25.4 -> 28.0
    assert (
        first["longest_write_gap_s"]
        == second["longest_write_gap_s"]
        == pytest.approx(0.1, abs=0.01)
    )


def test_equal_gaps_name_the_lowest_partition() -> None:
    h = History(meta={"config": {"partitions": 2}})
    for p in (1, 0):
        steady(h, p, 0.0, 2.0)
        steady(h, p, 6.0, 10.0)
    h.faults = [FaultWindow(0, "kill-any", 3.0, 4.0, node=1)]
    (gap,) = availability(h)
    assert gap["partition"] == 0


def test_a_partition_left_short_of_min_isr_is_told_apart_from_a_failover_stall() -> None:
    """The 100-seed sweep's long pauses all began just after another node came back: its
    partitions' ISR was {paused leader, one other} when the pause started, so once the leader
    was fenced one in-sync replica was left, and min.insync.replicas = 2 held acks=all writes
    until the returning node caught up. The report now names such partitions (from the ISR
    recorded as the fault started) and gives the worst gap among the others separately."""
    h = History(meta={"config": {"partitions": 3, "min_insync": 2, "replication_factor": 3}})
    steady(h, 0, 0.0, 5.0)
    steady(h, 0, 8.0, 20.0)  # full ISR: a 3 s failover
    steady(h, 1, 0.0, 5.0)
    steady(h, 1, 10.5, 20.0)  # ISR {1, 2} before the pause of 1: waits for node 3 to rejoin
    steady(h, 2, 0.0, 20.0)
    isr = {"0": [1, 2, 3], "1": [1, 2], "2": [1, 2, 3]}
    h.faults = [FaultWindow(0, "pause", 5.0, 9.0, node=1, detail={"isr_before": isr})]
    (gap,) = availability(h)
    assert (gap["partition"], gap["longest_partition_gap_s"]) == (1, pytest.approx(5.5))
    assert gap["short_isr_partitions"] == [1]
    assert gap["longest_full_isr_gap_s"] == pytest.approx(3.0)
    # A cut's whole minority is gone too; without a recorded ISR nothing is told apart.
    cut = FaultWindow(0, "partition", 5.0, 9.0, node=1, detail={"isr_before": isr, "minority": [2]})
    h.faults = [cut]
    assert availability(h)[0]["short_isr_partitions"] == [0, 1, 2]
    h.faults = [FaultWindow(0, "pause", 5.0, 9.0, node=1)]
    (bare,) = availability(h)
    assert (bare["short_isr_partitions"], bare["longest_full_isr_gap_s"]) == (None, None)
    assert bare["controller_hit"] is None


def test_a_fault_that_also_took_the_controller_is_marked() -> None:
    h = History(meta={"config": {"partitions": 1}})
    steady(h, 0, 0.0, 20.0)
    paused_leader = FaultWindow(0, "pause", 5.0, 9.0, node=1, detail={"raft_leader_before": 1})
    elsewhere = FaultWindow(1, "pause", 12.0, 14.0, node=2, detail={"raft_leader_before": 1})
    cut = FaultWindow(
        2, "partition", 15.0, 16.0, node=2, detail={"raft_leader_before": 3, "minority": [3]}
    )
    h.faults = [paused_leader, elsewhere, cut]
    assert [a["controller_hit"] for a in availability(h)] == [True, False, True]
