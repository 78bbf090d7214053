"""Every check on hand-made histories: silent on a clean run, firing on the fault it names."""

from __future__ import annotations

import pytest

from rillet.chaos import availability, checker
from rillet.chaos.final_state import FinalState, Received, ReplicaCopy
from rillet.chaos.history import (
    AdminOp,
    Crash,
    FaultWindow,
    GroupSample,
    History,
    OffsetSample,
    Write,
)


def clean_run() -> tuple[History, FinalState]:
    """Two producers, two partitions, everything acknowledged, read, consumed, replicated."""
    h = History()
    final = FinalState("t", 2)
    t = 0.0
    offsets = {0: 0, 1: 0}
    for seq in range(6):
        for process in ("w1", "w2"):
            p = seq % 2
            value = f"{process}:{seq}"
            h.writes.append(Write(process, value, p, t, "ok", t + 0.01, offsets[p]))
            final.records.setdefault(p, []).append((offsets[p], value))
            offsets[p] += 1
            t += 0.1
    final.end_offsets = dict(offsets)
    final.read_upto = dict(offsets)
    final.committed = dict(offsets)
    final.received = [
        Received("c1", p, o, v) for p, records in final.records.items() for o, v in records
    ]
    copy = ReplicaCopy(1, 100, 100, "ab" * 32, 6)
    final.replicas = {p: [copy, ReplicaCopy(2, 100, 100, "ab" * 32, 6)] for p in (0, 1)}
    h.offsets = [OffsetSample(1.0, {0: 2, 1: 2}), OffsetSample(2.0, {0: 6, 1: 6})]
    h.groups = [GroupSample(1.0, 3, {"m1": [0], "m2": [1]})]
    return h, final


def names(violations: list[checker.Violation]) -> set[str]:
    return {v.check for v in violations}


def test_a_clean_run_has_no_violations() -> None:
    h, final = clean_run()
    assert checker.check_all(h, final) == []


def test_a_lost_acknowledged_write_is_caught() -> None:
    h, final = clean_run()
    final.records[1] = final.records[1][:-1]  # the last acked record of partition 1 is gone
    final.end_offsets[1] -= 1
    final.read_upto[1] -= 1
    final.received = [r for r in final.received if (r.partition, r.offset) != (1, 5)]
    final.committed[1] = 5
    found = checker.acknowledged_not_lost(h, final)
    assert names(found) == {"acknowledged-lost"}
    assert found[0].details["count"] == 1
    assert "w2:5@1/5" in found[0].details["examples"]


def test_an_unknown_outcome_missing_from_the_log_is_not_a_loss() -> None:
    h, final = clean_run()
    h.writes.append(Write("w1", "w1:99", 0, 5.0, "unknown", 35.0, None, "timeout"))
    h.writes.append(Write("w1", "w1:100", 0, 5.0, "fail", 5.0, None, "buffer full"))
    assert checker.check_all(h, final) == []


def test_an_acknowledged_write_read_at_another_offset_is_caught() -> None:
    h, final = clean_run()
    records = final.records[0]
    records[0], records[1] = (records[0][0], records[1][1]), (records[1][0], records[0][1])
    found = checker.acknowledged_not_lost(h, final)
    assert names(found) == {"acknowledged-moved"}


def test_an_incomplete_final_read_is_reported_not_counted_as_loss() -> None:
    h, final = clean_run()
    final.records[0] = final.records[0][:2]
    final.read_upto[0] = 2
    assert checker.acknowledged_not_lost(h, final) == []
    assert names(checker.nodes_and_recovery(h, final)) == {"final-read-incomplete"}


def test_records_out_of_their_producer_s_order_are_caught() -> None:
    h, final = clean_run()
    values = [v for _, v in final.records[0]]
    values[0], values[2] = values[2], values[0]  # w1:0 and w1:2 swapped in partition 0
    final.records[0] = list(enumerate(values))
    found = checker.producer_order(h, final)
    assert names(found) == {"producer-order"}
    assert "w1:0" in found[0].details["examples"][0]


def test_duplicates_are_violations_only_with_idempotence() -> None:
    h, final = clean_run()
    final.records[0].append((6, "w1:4"))
    found = checker.duplicates(h, final)
    assert names(found) == {"duplicates"}
    assert checker.duplicate_count(final) == 1
    final.idempotent = False
    assert checker.duplicates(h, final) == []
    assert checker.duplicate_count(final) == 1


def test_records_nobody_wrote_and_failed_writes_in_the_log_are_caught() -> None:
    h, final = clean_run()
    final.records[0].append((6, "ghost:1"))
    h.writes.append(Write("w1", "w1:50", 0, 1.0, "fail", 1.0, None, "refused"))
    final.records[0].append((7, "w1:50"))
    assert names(checker.unexpected_records(h, final)) == {
        "phantom-records",
        "failed-write-visible",
    }


@pytest.mark.parametrize(
    ("copy", "problem"),
    [
        (ReplicaCopy(3, 100, 100, "cd" * 32, 6), "differ"),
        (ReplicaCopy(3, 90, 90, "ab" * 32, 5), "ends at offset 5"),
        (ReplicaCopy(3, 0, 0, "", -1, "unreadable: gone"), "unreadable"),
    ],
)
def test_replicas_that_differ_below_the_high_watermark_are_caught(
    copy: ReplicaCopy, problem: str
) -> None:
    h, final = clean_run()
    final.replicas[1] = [*final.replicas[1], copy]
    found = checker.replicas_identical(h, final)
    assert names(found) == {"replicas-diverge"}
    assert found[0].details["partition"] == 1
    assert any(problem in p for p in found[0].details["problems"])


def test_committed_offsets_going_backwards_are_caught() -> None:
    h, final = clean_run()
    h.offsets.append(OffsetSample(3.0, {0: 4, 1: 6}))
    found = checker.committed_offsets(h, final)
    assert names(found) == {"committed-offset-regressed"}
    assert found[0].details == {"partition": 0, "from": 6, "to": 4, "t": 3.0}


def test_committed_offsets_are_judged_in_time_order() -> None:
    h, final = clean_run()
    h.offsets.reverse()  # as recorded out of order: still monotonic by time
    assert checker.committed_offsets(h, final) == []


def test_a_committed_offset_past_the_log_end_is_caught() -> None:
    h, final = clean_run()
    final.committed[0] = 9
    assert names(checker.committed_offsets(h, final)) == {"committed-beyond-end"}


def test_two_owners_of_a_partition_in_one_sample_are_caught() -> None:
    h, final = clean_run()
    h.groups.append(GroupSample(2.0, 4, {"m1": [0, 1], "m2": [1]}))
    found = checker.single_owner(h, final)
    assert names(found) == {"two-owners"}
    assert found[0].details["owners"] == {"1": ["m1", "m2"]}


def test_a_partition_moving_between_samples_is_not_two_owners() -> None:
    h, final = clean_run()
    h.groups.append(GroupSample(2.0, 3, {"m1": [0, 1], "m2": []}))
    assert checker.single_owner(h, final) == []


def test_a_member_that_saw_a_record_the_log_does_not_have_is_caught() -> None:
    h, final = clean_run()
    final.received.append(Received("c2", 0, 3, "w9:9"))  # offset 3 holds another value
    final.received.append(Received("c2", 1, 40, "w9:10"))  # beyond the end of partition 1
    found = checker.consumer_reads(h, final)
    assert names(found) == {"consumer-saw-uncommitted"}
    assert found[0].details["count"] == 2


def power_cut_all_then_rewritten(flush_ms: int | None) -> tuple[History, FinalState]:
    """Every node loses power at t=2.0 without a flush policy: partition 0 loses offsets 2..5
    (written before the cut), is written anew from offset 2, and a member that had read the
    old records resets and commits below what it had committed."""
    h, final = clean_run()
    h.meta = {"config": {"flush_ms": flush_ms, "min_insync": 2, "replication_factor": 3}}
    h.faults.append(FaultWindow(0, "power-cut-all", 2.0, 4.0, 1, {"cut": [1, 2, 3]}))
    new = [(o, f"w3:{o}") for o in range(2, 5)]
    for o, value in new:
        h.writes.append(Write("w3", value, 0, 5.0 + o, "ok", 5.1 + o, o))
    final.records[0] = final.records[0][:2] + new
    final.end_offsets[0] = final.read_upto[0] = 5
    final.committed[0] = 5
    h.offsets.append(OffsetSample(8.0, {0: 3, 1: 6}))
    final.received += [Received("c2", 0, o, v) for o, v in new]
    return h, final


def test_what_follows_a_power_loss_the_promise_allows_is_not_a_violation() -> None:
    h, final = power_cut_all_then_rewritten(flush_ms=None)
    assert checker.check_all(h, final) == []


def test_the_same_history_with_a_flush_policy_is_caught() -> None:
    h, final = power_cut_all_then_rewritten(flush_ms=0)
    found = names(checker.check_all(h, final))
    assert {"acknowledged-lost", "committed-offset-regressed", "consumer-saw-uncommitted"} <= found


def test_records_below_the_committed_offset_that_no_member_got_are_caught() -> None:
    h, final = clean_run()
    final.received = [r for r in final.received if (r.partition, r.offset) != (0, 2)]
    found = checker.consumer_reads(h, final)
    assert names(found) == {"consumer-missed"}
    assert found[0].details["examples"] == ["0/2"]


def test_crashes_and_a_cluster_that_did_not_recover_are_caught() -> None:
    h, final = clean_run()
    h.crashes.append(Crash(3.0, 2, 1, "Traceback ..."))
    final.recovered = False
    final.notes.append("not recovered within 90s")
    assert names(checker.nodes_and_recovery(h, final)) == {"node-crashed", "not-recovered"}


def churn(*ops: tuple[str, str, str]) -> list[AdminOp]:
    return [
        AdminOp(f, name, float(i), outcome, float(i) + 0.5)
        for i, (f, name, outcome) in enumerate(ops)
    ]


def test_topics_follow_their_last_acknowledged_create_or_delete() -> None:
    h, final = clean_run()
    h.admin = churn(
        ("create", "a", "ok"), ("delete", "a", "ok"),  # gone
        ("create", "b", "ok"),  # exists
        ("create", "c", "ok"), ("delete", "c", "unknown"),  # either
    )  # fmt: skip
    final.topics = ["t", "b", "c"]
    assert checker.topic_operations(h, final) == []
    final.topics = ["t", "b"]
    assert checker.topic_operations(h, final) == []
    final.topics = None  # could not list: nothing to judge
    assert checker.topic_operations(h, final) == []


@pytest.mark.parametrize(
    ("topics", "problem"),
    [(["t", "a", "b"], "a: deleted"), (["t"], "b: created")],
)
def test_a_topic_that_disagrees_with_its_acknowledged_operations_is_caught(
    topics: list[str], problem: str
) -> None:
    h, final = clean_run()
    h.admin = churn(("create", "a", "ok"), ("delete", "a", "ok"), ("create", "b", "ok"))
    final.topics = topics
    found = checker.topic_operations(h, final)
    assert names(found) == {"topic-operations"}
    assert found[0].details["examples"][0].startswith(problem)


def test_every_check_is_registered() -> None:
    assert set(checker.CHECKS.values()) >= {
        checker.acknowledged_not_lost,
        checker.producer_order,
        checker.duplicates,
        checker.unexpected_records,
        checker.replicas_identical,
        checker.committed_offsets,
        checker.single_owner,
        checker.consumer_reads,
        checker.nodes_and_recovery,
        checker.topic_operations,
    }


def test_availability_is_the_longest_gap_between_acks_around_each_fault() -> None:
    h = History()
    acks = [0.0, 0.5, 1.0, 1.5, 4.0, 4.5, 10.0, 10.2, 20.0]
    h.writes = [Write("w1", f"w1:{i}", 0, t - 0.01, "ok", t, i) for i, t in enumerate(acks)]
    h.faults = [
        FaultWindow(0, "kill-leader", 2.0, 3.0, node=1),
        FaultWindow(1, "pause", 9.0, 9.5, node=2, skipped="node 2 is already down"),
        FaultWindow(2, "kill-any", 11.0, 12.0, node=3),
    ]
    gaps = availability.availability(h)
    assert [g["step"] for g in gaps] == [0, 2]  # a skipped fault has no window
    assert gaps[0]["longest_write_gap_s"] == pytest.approx(5.5)  # 4.5 -> 10.0 (settle: 8.0)
    assert gaps[1]["longest_write_gap_s"] == pytest.approx(9.0)  # its start 11.0 -> 20.0


def test_a_stall_that_begins_with_the_next_fault_is_that_fault_s_alone() -> None:
    """Seed 6 (a15bf25): a Raft-leader kill that cost 0.59 s was charged the 3.12 s stall
    of the network partition that began 2.5 s after its heal, at its last ack."""
    h = History()
    acks = [0.0, 4.2] + [round(4.8 + 0.1 * i, 1) for i in range(92)] + [17.0, 17.5]
    assert acks[-3] == 13.9
    h.writes = [Write("w1", f"w1:{i}", 0, t - 0.01, "ok", t, i) for i, t in enumerate(acks)]
    h.faults = [
        FaultWindow(0, "kill-leader", 4.25, 11.45, node=1),
        FaultWindow(1, "partition", 13.92, 17.4, node=3),
    ]
    kill, partition = availability.availability(h)
    assert kill["longest_write_gap_s"] == pytest.approx(0.55)  # its start 4.25 -> 4.8
    assert partition["longest_write_gap_s"] == pytest.approx(3.08)  # 13.92 -> 17.0


@pytest.mark.parametrize("next_start", [14.0, 16.0])
def test_consecutive_faults_split_one_stall_wherever_the_next_one_starts(
    next_start: float,
) -> None:
    h = History()
    acks = [float(t) for t in range(10)] + [20.0, 21.0]  # one stall: 9.0 -> 20.0
    h.writes = [Write("w1", f"w1:{i}", 0, t - 0.01, "ok", t, i) for i, t in enumerate(acks)]
    h.faults = [
        FaultWindow(0, "kill-leader", 9.5, 10.0, node=1),
        FaultWindow(1, "partition", next_start, next_start + 2, node=2),
    ]
    kill, partition = availability.availability(h)
    assert kill["longest_write_gap_s"] == pytest.approx(next_start - 9.5)
    assert partition["longest_write_gap_s"] == pytest.approx(20.0 - next_start)


def test_overlapping_faults_share_their_stalls() -> None:
    h = History()
    acks = [0.0, 1.0, 6.0, 7.0]
    h.writes = [Write("w1", f"w1:{i}", 0, t - 0.01, "ok", t, i) for i, t in enumerate(acks)]
    h.faults = [
        FaultWindow(0, "pause", 1.5, 3.0, node=1),
        FaultWindow(1, "kill-any", 2.0, 4.0, node=2),  # begins before the pause heals
    ]
    assert [g["longest_write_gap_s"] for g in availability.availability(h)] == [
        pytest.approx(4.5),  # 1.5 -> 6.0
        pytest.approx(4.0),  # 2.0 -> 6.0
    ]


def test_availability_without_any_ack_is_the_whole_window() -> None:
    h = History()
    h.faults = [FaultWindow(0, "kill-leader", 2.0, 3.0, node=1)]
    assert availability.availability(h)[0]["longest_write_gap_s"] == pytest.approx(
        1.0 + availability.SETTLE_S
    )


def test_availability_also_reports_the_longest_stall_of_a_single_partition() -> None:
    h = History()
    for i in range(100):  # partition 0 acks every 0.1 s throughout
        h.writes.append(Write("w1", f"w1:{i}", 0, i * 0.1, "ok", i * 0.1 + 0.01, i))
    partition_1 = [0.5, 1.0] + [4.0 + 0.1 * i for i in range(50)]  # stalls 1.0 -> 4.0
    for i, t in enumerate(partition_1):
        h.writes.append(Write("w2", f"w2:{i}", 1, t - 0.01, "ok", t, i))
    h.faults = [FaultWindow(0, "kill-partition-leader", 1.5, 2.5, node=2)]
    gap = availability.availability(h)[0]
    assert gap["longest_write_gap_s"] == pytest.approx(0.1)
    assert gap["longest_partition_gap_s"] == pytest.approx(2.5)  # from the kill at 1.5
    assert gap["partition"] == 1
