"""The loop-lag tracker: a stall is reported at once, a window's worst lag when it closes,
and a quiet node reports nothing."""

from __future__ import annotations

from pathlib import Path

from rillet.broker.runtime.loop_lag import CpuWaitClock, LagTracker


def test_a_stall_is_reported_at_once_and_the_window_maximum_when_it_closes() -> None:
    tracker = LagTracker(window_s=1.0, warn_ms=100, report_min_ms=10)
    assert tracker.observe(0.0, 2).stall_ms is None
    stalled = tracker.observe(0.5, 250)
    assert stalled.stall_ms == 250 and stalled.window_max_ms is None
    closed = tracker.observe(1.0, 3)
    assert closed.stall_ms is None and closed.window_max_ms == 250
    assert tracker.max_ms == 250


def test_a_quiet_window_reports_nothing_and_negative_lag_counts_as_none() -> None:
    tracker = LagTracker(window_s=1.0, warn_ms=100, report_min_ms=10)
    for i in range(30):
        report = tracker.observe(i * 0.1, -1 if i % 2 else 4)
        assert report.stall_ms is None and report.window_max_ms is None
    assert tracker.max_ms == 4


def test_the_wait_for_a_core_is_told_apart_from_the_nodes_own_work() -> None:
    tracker = LagTracker(window_s=1.0, warn_ms=100, report_min_ms=10)
    stalled = tracker.observe(0.0, 250, cpu_wait_ms=180)
    assert stalled.stall_ms == 250 and stalled.stall_cpu_wait_ms == 180
    tracker.observe(0.5, 60, cpu_wait_ms=500)  # more wait than lag: none of it own work
    closed = tracker.observe(1.0, 20, cpu_wait_ms=0)
    assert closed.window_max_ms == 250 and closed.window_own_max_ms == 70
    assert tracker.max_ms == 250 and tracker.own_max_ms == 70


def test_the_cpu_wait_clock_reads_the_schedulers_run_delay(tmp_path: Path) -> None:
    stats = tmp_path / "schedstat"
    stats.write_text("349491313 51173357 170\n")
    clock = CpuWaitClock(str(stats))
    assert clock.read_ms() == 51.173357
    stats.write_text("garbage\n")
    assert clock.read_ms() == 0.0  # unreadable: closed, every lag counts as own work
    assert clock.read_ms() == 0.0
    assert CpuWaitClock(str(tmp_path / "missing")).read_ms() == 0.0
