"""Event-loop lag: how late a task that asked to sleep a fixed interval wakes up.

Everything on a node shares one trio loop, so any synchronous stretch (applying a large
metadata entry, opening thousands of partitions, encoding a huge response) delays every
request, heartbeat and Raft message behind it. The monitor sleeps ``interval_s`` in a loop
and measures the overshoot; :class:`LagTracker` (sans-I/O: times come in as arguments) keeps
the worst overshoot of each reporting window. A stall of ``warn_ms`` or more is logged at
WARNING at once; a window whose worst lag reached ``report_min_ms`` is logged at INFO when
it closes, so a quiet node logs nothing and a benchmark can read the worst lag from the log.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import trio

log = logging.getLogger(__name__)

LOOP_LAG_PROBE_INTERVAL_S = 0.05
LOOP_LAG_WINDOW_S = 1.0
LOOP_LAG_WARN_MS = 100.0
LOOP_LAG_REPORT_MIN_MS = 10.0


@dataclass(slots=True)
class LagReport:
    """The worst lag of a closed window (``window_max_ms``) and whether a single probe just
    stalled past the warning threshold (``stall_ms``, else None)."""

    stall_ms: float | None
    window_max_ms: float | None


class LagTracker:
    """Worst event-loop lag per window; the highest seen since start in ``max_ms``."""

    def __init__(
        self,
        window_s: float = LOOP_LAG_WINDOW_S,
        warn_ms: float = LOOP_LAG_WARN_MS,
        report_min_ms: float = LOOP_LAG_REPORT_MIN_MS,
    ) -> None:
        self._window_s = window_s
        self._warn_ms = warn_ms
        self._report_min_ms = report_min_ms
        self._window_start_s: float | None = None
        self._window_max_ms = 0.0
        self.last_ms = 0.0  # the latest probe's lag (the /metrics gauge)
        self.max_ms = 0.0

    def observe(self, now_s: float, lag_ms: float) -> LagReport:
        """One probe woke ``lag_ms`` late at ``now_s``."""
        if self._window_start_s is None:
            self._window_start_s = now_s
        lag_ms = max(lag_ms, 0.0)
        self.last_ms = lag_ms
        self._window_max_ms = max(self._window_max_ms, lag_ms)
        self.max_ms = max(self.max_ms, lag_ms)
        stall = lag_ms if lag_ms >= self._warn_ms else None
        closed: float | None = None
        if now_s - self._window_start_s >= self._window_s:
            if self._window_max_ms >= self._report_min_ms:
                closed = self._window_max_ms
            self._window_start_s = now_s
            self._window_max_ms = 0.0
        return LagReport(stall, closed)


async def monitor_loop_lag(
    tracker: LagTracker, interval_s: float = LOOP_LAG_PROBE_INTERVAL_S
) -> None:
    """Probe the loop forever (cancel to stop), logging what the tracker reports."""
    while True:
        start = trio.current_time()
        await trio.sleep(interval_s)
        now = trio.current_time()
        report = tracker.observe(now, (now - start - interval_s) * 1000)
        if report.stall_ms is not None:
            log.warning("event loop stalled for %.0f ms", report.stall_ms)
        if report.window_max_ms is not None:
            log.info("event loop lag max %.1f ms", report.window_max_ms)
