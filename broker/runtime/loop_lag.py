"""Event-loop lag: how late a task that asked to sleep a fixed interval wakes up.

Everything on a node shares one trio loop, so any synchronous stretch (applying a large
metadata entry, opening thousands of partitions, encoding a huge response) delays every
request, heartbeat and Raft message behind it. The monitor sleeps ``interval_s`` in a loop
and measures the overshoot; :class:`LagTracker` (sans-I/O: times come in as arguments) keeps
the worst overshoot of each reporting window. A stall of ``warn_ms`` or more is logged at
WARNING at once; a window whose worst lag reached ``report_min_ms`` is logged at INFO when
it closes, so a quiet node logs nothing and a benchmark can read the worst lag from the log.

A late wake-up has two causes that call for different remedies: the node's own work held
the loop (a long synchronous step, a garbage collection, a lock), or the loop was ready but
the machine gave its thread no core (other processes, e.g. the other nodes of a local
cluster on a small machine). On Linux the kernel counts, per thread, the time spent
runnable but waiting for a core (``/proc/thread-self/schedstat``); the monitor reads it
around every probe and reports the lag minus that wait as the *own* lag. The wait counted
covers the whole probe (its sleep and its overshoot), so the own lag can understate the
node's share by the waits within one probe interval; the interval is short for that
reason.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import trio

log = logging.getLogger(__name__)

LOOP_LAG_PROBE_INTERVAL_S = 0.02
LOOP_LAG_WINDOW_S = 1.0
LOOP_LAG_WARN_MS = 100.0
LOOP_LAG_REPORT_MIN_MS = 10.0


@dataclass(slots=True)
class LagReport:
    """The worst lag of a closed window (``window_max_ms``, with the worst own lag of that
    window in ``window_own_max_ms``) and whether a single probe just stalled past the
    warning threshold (``stall_ms``, with the part spent waiting for a core in
    ``stall_cpu_wait_ms``; else None)."""

    stall_ms: float | None
    window_max_ms: float | None
    stall_cpu_wait_ms: float = 0.0
    window_own_max_ms: float = 0.0


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
        self._window_own_max_ms = 0.0
        self.last_ms = 0.0  # the latest probe's lag (the /metrics gauge)
        self.max_ms = 0.0
        self.own_max_ms = 0.0  # the worst lag less the wait for a core, since start

    def observe(self, now_s: float, lag_ms: float, cpu_wait_ms: float = 0.0) -> LagReport:
        """One probe woke ``lag_ms`` late at ``now_s``; its thread waited ``cpu_wait_ms``
        for a core while it slept and overshot."""
        if self._window_start_s is None:
            self._window_start_s = now_s
        lag_ms = max(lag_ms, 0.0)
        cpu_wait_ms = min(max(cpu_wait_ms, 0.0), lag_ms)
        own_ms = lag_ms - cpu_wait_ms
        self.last_ms = lag_ms
        self._window_max_ms = max(self._window_max_ms, lag_ms)
        self._window_own_max_ms = max(self._window_own_max_ms, own_ms)
        self.max_ms = max(self.max_ms, lag_ms)
        self.own_max_ms = max(self.own_max_ms, own_ms)
        report = LagReport(None, None)
        if lag_ms >= self._warn_ms:
            report.stall_ms, report.stall_cpu_wait_ms = lag_ms, cpu_wait_ms
        if now_s - self._window_start_s >= self._window_s:
            if self._window_max_ms >= self._report_min_ms:
                report.window_max_ms = self._window_max_ms
                report.window_own_max_ms = self._window_own_max_ms
            self._window_start_s = now_s
            self._window_max_ms = 0.0
            self._window_own_max_ms = 0.0
        return report


class CpuWaitClock:
    """The calling thread's total time runnable but waiting for a core, in ms, from the
    kernel's scheduler statistics; 0 where they are not available (then every lag counts
    as the node's own). Create and read it on the event loop's thread."""

    def __init__(self, path: str = "/proc/thread-self/schedstat") -> None:
        try:
            self._fd: int | None = os.open(path, os.O_RDONLY)
        except OSError:
            self._fd = None

    def read_ms(self) -> float:
        if self._fd is None:
            return 0.0
        try:
            fields = os.pread(self._fd, 128, 0).split()
            return int(fields[1]) / 1e6
        except (OSError, IndexError, ValueError):
            self.close()
            return 0.0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


async def monitor_loop_lag(
    tracker: LagTracker, interval_s: float = LOOP_LAG_PROBE_INTERVAL_S
) -> None:
    """Probe the loop forever (cancel to stop), logging what the tracker reports."""
    clock = CpuWaitClock()
    waited_ms = clock.read_ms()  # each probe's reading is the next one's starting point
    try:
        while True:
            start = trio.current_time()
            await trio.sleep(interval_s)
            now, now_waited_ms = trio.current_time(), clock.read_ms()
            report = tracker.observe(
                now, (now - start - interval_s) * 1000, now_waited_ms - waited_ms
            )
            waited_ms = now_waited_ms
            if report.stall_ms is not None:
                log.warning(
                    "event loop stalled for %.0f ms (%.0f ms of it waiting for a core)",
                    report.stall_ms,
                    report.stall_cpu_wait_ms,
                )
            if report.window_max_ms is not None:
                log.info(
                    "event loop lag max %.1f ms, own work %.1f ms",
                    report.window_max_ms,
                    report.window_own_max_ms,
                )
    finally:
        clock.close()
