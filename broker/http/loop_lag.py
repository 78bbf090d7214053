"""Event-loop lag: how late a task that sleeps a fixed interval wakes up.

Everything on a node shares one trio loop, so any synchronous stretch delays every request,
heartbeat and Raft message behind it. The probe sleeps ``interval_s`` in a loop and records
the overshoot; :class:`LoopLag` keeps the latest and the worst, read by /metrics.
"""

from __future__ import annotations

from dataclasses import dataclass

import trio

LOOP_LAG_PROBE_INTERVAL_S = 0.1


@dataclass(slots=True)
class LoopLag:
    last_s: float = 0.0
    max_s: float = 0.0
    probes: int = 0

    def observe(self, lag_s: float) -> None:
        lag_s = max(lag_s, 0.0)
        self.last_s = lag_s
        self.max_s = max(self.max_s, lag_s)
        self.probes += 1


async def probe_loop_lag(lag: LoopLag, interval_s: float = LOOP_LAG_PROBE_INTERVAL_S) -> None:
    """Probe forever (cancel to stop)."""
    while True:
        start = trio.current_time()
        await trio.sleep(interval_s)
        lag.observe(trio.current_time() - start - interval_s)
