"""The clock faults: opt-in kinds with seeded draws, the test-only clock shim that moves a
node's wall clock (and only its wall clock), and the clock row's stall check."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from rillet.broker.runtime.clock import SystemClock
from rillet.chaos.clock_checks import STALL_BOUND_S, clock_row_stalls
from rillet.chaos.clock_faults import CLOCK_FAULTS, clock_file, clock_wrap
from rillet.chaos.clock_shim import ShiftedClock, write_clock
from rillet.chaos.history import FaultWindow, History, Write
from rillet.chaos.schedule import DEFAULT_FAULTS, build_schedule, parse_faults

HOUR_MS = 3_600_000


def test_clock_kinds_are_opt_in_and_draw_offsets() -> None:
    assert not set(CLOCK_FAULTS) & set(DEFAULT_FAULTS)
    assert parse_faults("all,clock-skew") == (*DEFAULT_FAULTS, "clock-skew")
    steps = [s for seed in range(1, 30) for s in build_schedule(seed, CLOCK_FAULTS, 30, 3, 6).steps]
    skews = [s for s in steps if s.kind == "clock-skew"]
    jumps = [s for s in steps if s.kind == "clock-jump"]
    assert skews and jumps
    assert all(abs(s.params["offset_ms"]) % HOUR_MS == 0 for s in skews)
    assert {s.params["offset_ms"] > 0 for s in skews} == {True, False}  # ahead and behind
    assert all(s.params["period_ms"] > 0 and s.params["flip_ms"] != 0 for s in jumps)
    assert build_schedule(5, CLOCK_FAULTS, 30, 3, 6) == build_schedule(5, CLOCK_FAULTS, 30, 3, 6)


def test_the_shim_moves_the_wall_clock_and_follows_its_file(tmp_path: Path) -> None:
    path = tmp_path / "clock.json"
    write_clock(path, 2 * HOUR_MS)
    clock = ShiftedClock(path)
    clock.reload()
    assert clock.time() - time.time() == pytest.approx(7200, abs=5)
    write_clock(path, -HOUR_MS, flip_ms=60_000, period_ms=1)
    clock.reload()
    offsets = {round(clock.time() - time.time()) for _ in range(2000)}
    assert offsets <= {-3600, -3540} and -3600 in offsets


def test_a_node_argv_runs_under_the_shim(tmp_path: Path) -> None:
    """The wrap runs the argv in a child whose time.time is off by the file's offset, while
    time.monotonic is untouched (the shim's only effect)."""
    script = tmp_path / "show.py"
    script.write_text("import time; print(time.time(), time.monotonic())\n")
    argv = clock_wrap(tmp_path)(3, [sys.executable, str(script)])
    write_clock(clock_file(tmp_path, 3), -5 * HOUR_MS)
    before = time.monotonic()
    wall, mono = map(float, subprocess.run(argv, capture_output=True, check=True).stdout.split())
    assert wall - time.time() == pytest.approx(-5 * 3600, abs=30)
    assert before <= mono <= time.monotonic()


def test_the_steady_clock_ignores_a_stepped_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Leases, sessions and lags run on steady_ms: a wall clock stepped 6 h ahead moves
    now_ms, never steady_ms."""
    clock = SystemClock()
    steady_before, wall_before = clock.steady_ms(), clock.now_ms()
    assert abs(steady_before - wall_before) < 1000
    true_time_ns = time.time_ns
    monkeypatch.setattr(time, "time_ns", lambda: true_time_ns() + 6 * HOUR_MS * 1_000_000)
    assert clock.now_ms() - wall_before >= 6 * HOUR_MS
    assert clock.steady_ms() - steady_before < 1000


def _steady(h: History, partition: int, start_s: float, end_s: float) -> None:
    t = start_s
    while t < end_s:
        h.writes.append(Write("w", f"w:{len(h.writes)}", partition, t, "ok", t, len(h.writes)))
        t = round(t + 0.1, 6)


def test_a_stall_over_the_bound_is_a_violation_only_in_a_run_with_clock_faults() -> None:
    h = History(meta={"config": {"partitions": 2, "min_insync": 2, "replication_factor": 3}})
    _steady(h, 0, 0.0, 40.0)
    _steady(h, 1, 0.0, 12.0)
    _steady(h, 1, 12.0 + STALL_BOUND_S + 2, 40.0)  # the kill's partition stalls too long
    isr = {"isr_before": {"0": [1, 2, 3], "1": [1, 2, 3]}}
    h.faults = [
        FaultWindow(0, "clock-skew", 3.0, 8.0, node=2, detail=isr),
        FaultWindow(1, "kill-any", 12.0, 24.0, node=1, detail=isr),
    ]
    (stall,) = clock_row_stalls(h)
    assert stall.check == "clock-stall" and stall.details["step"] == 1
    h.faults = h.faults[1:]
    assert clock_row_stalls(h) == []  # other rows: availability is measured, not checked
    h.faults = [
        FaultWindow(0, "kill-any", 12.0, 24.0, node=1, detail=isr),
        FaultWindow(1, "clock-skew", 30.0, 35.0, node=2, detail=isr),
    ]
    assert clock_row_stalls(h) == []  # before the first clock step: not the clock's doing
