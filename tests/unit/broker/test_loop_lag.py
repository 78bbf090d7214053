"""The loop-lag tracker: a stall is reported at once, a window's worst lag when it closes,
and a quiet node reports nothing."""

from __future__ import annotations

from rillet.broker.loop_lag import LagTracker


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
