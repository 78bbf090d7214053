"""Names the task behind an event-loop stall: every task step that held the loop for at
least a threshold is logged with its task's name, its CPU time and where it yielded.

The loop-lag monitor (broker/runtime/loop_lag.py) says *that* the loop was held and for how long;
this says *which* task held it. A trio instrument sees the start and end of every task
step, so it costs a couple of clock reads per step: off by default (``[tasks]
slow_task_step_ms = 0``), for an operator or a benchmark chasing a stall. CPU time is the
loop thread's own; a step whose wall time far exceeds its CPU time waited for a core (or
for a lock, or a blocking call) rather than computed.
"""

from __future__ import annotations

import logging
import time
from types import FrameType
from typing import Any

import trio

log = logging.getLogger(__name__)


class SlowStepLog(trio.abc.Instrument):
    """Logs at WARNING each task step of ``threshold_ms`` wall time or more."""

    def __init__(self, threshold_ms: float) -> None:
        self._threshold_s = threshold_ms / 1000
        self._wall_s: float | None = None  # None: not inside a step we saw begin
        self._cpu_s = 0.0
        self.slow_steps = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self._wall_s = time.perf_counter()
        self._cpu_s = time.thread_time()

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        if self._wall_s is None:
            return  # the step that added this instrument: its start was not seen
        wall_s, self._wall_s = time.perf_counter() - self._wall_s, None
        if wall_s < self._threshold_s:
            return
        cpu_s = time.thread_time() - self._cpu_s
        self.slow_steps += 1
        log.warning(
            "task %s held the event loop for %.0f ms (%.0f ms CPU), then waited at %s",
            task.name,
            wall_s * 1000,
            cpu_s * 1000,
            suspended_at(task.coro),
        )


def suspended_at(coro: Any) -> str:
    """The innermost of our own frames a suspended coroutine waits in ("?" if none):
    trio's frames are skipped, they say nothing about whose work it was."""
    where = "?"
    while coro is not None:
        frame: FrameType | None = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is not None and "/trio/" not in frame.f_code.co_filename:
            where = (
                f"{frame.f_code.co_qualname} ({_short(frame.f_code.co_filename)}:{frame.f_lineno})"
            )
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return where


def _short(path: str) -> str:
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-2:])


async def watch_slow_steps(threshold_ms: int) -> None:
    """Log slow task steps until cancelled (the node's lifetime)."""
    instrument = SlowStepLog(threshold_ms)
    trio.lowlevel.add_instrument(instrument)
    try:
        await trio.sleep_forever()
    finally:
        trio.lowlevel.remove_instrument(instrument)
