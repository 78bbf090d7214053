"""The history file: written from threads, read back into joined operations and windows."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from rillet.chaos.final_state import FinalState, Received, ReplicaCopy
from rillet.chaos.history import HistoryWriter, load_history, parse_history, parse_value, value_of


def test_values_name_their_producer_and_sequence() -> None:
    assert value_of("w1", 17) == "w1:17"
    assert parse_value("w1:17") == ("w1", 17)
    assert parse_value("a:b:3") == ("a:b", 3)
    assert parse_value("ghost") is None
    assert parse_value("w1:x") is None


def test_operations_are_joined_with_their_outcomes(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    with HistoryWriter(path) as h:
        h.write({"type": "meta", "meta": {"config": {"seed": 3}}})
        for seq, outcome in enumerate(("ok", "unknown", "fail", None)):
            op = {"f": "send", "process": "w1", "value": value_of("w1", seq), "partition": seq}
            h.write({"type": "invoke", **op})
            if outcome == "ok":
                h.write({"type": "ok", **op, "offset": 7})
            elif outcome is not None:
                h.write({"type": outcome, **op, "error": "boom"})
    history = load_history(path)
    assert history.meta == {"config": {"seed": 3}}
    outcomes = [(w.value, w.outcome, w.offset) for w in history.writes]
    assert outcomes == [
        ("w1:0", "ok", 7),
        ("w1:1", "unknown", None),
        ("w1:2", "fail", None),
        ("w1:3", "unknown", None),  # invoked, never completed: indeterminate
    ]
    assert [w.value for w in history.acknowledged()] == ["w1:0"]
    first = history.writes[0]
    assert first.latency_s is not None and first.latency_s >= 0
    assert history.writes[3].latency_s is None


def test_fault_windows_samples_and_crashes_are_parsed() -> None:
    lines = [
        json.dumps(e)
        for e in (
            {"type": "fault", "phase": "start", "step": 0, "kind": "pause", "node": 2, "t": 1.0},
            {"type": "fault", "phase": "skip", "step": 1, "kind": "kill-leader", "node": None,
             "reason": "no live Raft leader", "t": 2.0},
            {"type": "fault", "phase": "heal", "step": 0, "kind": "pause", "node": 2,
             "detail": {"x": 1}, "t": 3.0},
            {"type": "group", "generation": 4, "owned": {"m": [1, 0]}, "t": 3.5},
            {"type": "offsets", "offsets": {"0": 5, "1": 6}, "t": 3.6},
            {"type": "crash", "node": 3, "status": -6, "log_tail": "abort", "t": 4.0},
            {"type": "invoke", "f": "create", "process": "admin", "value": "churn-0", "t": 5.0},
            {"type": "ok", "f": "create", "process": "admin", "value": "churn-0", "t": 5.5},
            {"type": "invoke", "f": "delete", "process": "admin", "value": "churn-0", "t": 6.0},
        )
    ]  # fmt: skip
    h = parse_history([*lines, '{"type": "ok", "f": "se'])  # a torn last line is ignored
    assert [(f.step, f.node, f.start_t, f.heal_t, f.skipped) for f in h.faults] == [
        (0, 2, 1.0, 3.0, None),
        (1, None, 2.0, None, "no live Raft leader"),
    ]
    assert h.faults[0].detail == {"x": 1}
    assert h.groups[0].generation == 4 and h.groups[0].owned == {"m": [1, 0]}
    assert h.offsets[0].offsets == {0: 5, 1: 6}
    assert h.crashes[0].node == 3 and h.crashes[0].status == -6
    assert [(a.f, a.value, a.outcome, a.done_t) for a in h.admin] == [
        ("create", "churn-0", "ok", 5.5),
        ("delete", "churn-0", "unknown", None),
    ]
    assert h.writes == []


def test_concurrent_writers_never_interleave_lines(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    with HistoryWriter(path) as h:

        def write(name: str) -> None:
            for i in range(500):
                op = {"f": "send", "process": name, "value": value_of(name, i), "partition": 0}
                h.write({"type": "invoke", **op, "pad": "x" * 200})

        threads = [threading.Thread(target=write, args=(f"w{n}",)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    lines = path.read_text().splitlines()
    assert len(lines) == 2000
    assert all(json.loads(line)["type"] == "invoke" for line in lines)


def test_writes_after_close_are_dropped(tmp_path: Path) -> None:
    h = HistoryWriter(tmp_path / "h.jsonl")
    h.close()
    h.write({"type": "invoke"})  # a late callback from a producer thread: no error
    assert (tmp_path / "h.jsonl").read_text() == ""


def test_final_state_round_trips_through_json(tmp_path: Path) -> None:
    final = FinalState("t", 2, idempotent=False)
    final.records = {0: [(0, "w1:0"), (1, "w1:2")], 1: []}
    final.end_offsets, final.read_upto, final.committed = {0: 2, 1: 0}, {0: 2, 1: 0}, {0: 2}
    final.replicas = {0: [ReplicaCopy(1, 10, 10, "ab", 2), ReplicaCopy(2, 10, 0, "", -1, "x")]}
    final.received = [Received("c1", 0, 1, "w1:2")]
    final.recovered, final.notes = False, ["slow"]
    final.save(tmp_path)
    assert FinalState.load(tmp_path) == final
    assert final.read_complete(0) and final.read_complete(1)
    final.read_upto[0] = 1
    assert not final.read_complete(0)
