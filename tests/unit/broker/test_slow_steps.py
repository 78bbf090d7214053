"""The slow-step log names the task that held the event loop, and only such steps."""

from __future__ import annotations

import logging
import time

import pytest
import trio

from rillet.broker.config import TasksConfig
from rillet.broker.runtime.slow_steps import SlowStepLog, watch_slow_steps


async def _hog_the_loop(seconds: float) -> None:
    """One step that computes for ``seconds``, then yields here. The caller checkpoints
    just before: the quick step ending there may lose its core for 20 ms on a busy machine
    and be logged too, and it must not be taken for this one (it waits in the caller)."""
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        pass  # synchronous work: nothing else runs meanwhile
    await trio.sleep(0.001)


async def test_a_step_over_the_threshold_is_logged_with_its_task_and_cpu_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="rillet.broker.runtime.slow_steps")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch_slow_steps, 20)
        await trio.testing.wait_all_tasks_blocked()
        await trio.lowlevel.checkpoint()  # the hog's step starts here
        await _hog_the_loop(0.05)
        await trio.sleep(0.01)  # many quick steps: none logged
        nursery.cancel_scope.cancel()
    # Only the hog is sure to be logged: on a busy machine a quick step may also lose its
    # core for 20 ms of wall time, and that is a slow step too (its CPU time says so).
    lines = [r.getMessage() for r in caplog.records if "_hog_the_loop" in r.getMessage()]
    assert len(lines) == 1, [r.getMessage() for r in caplog.records]
    assert "held the event loop for" in lines[0] and "ms CPU" in lines[0]
    assert "test_a_step_over_the_threshold" in lines[0]  # the task's name


def test_quick_steps_cost_nothing_but_the_clock_reads() -> None:
    instrument = SlowStepLog(1000)

    async def quick() -> None:
        for _ in range(100):
            await trio.lowlevel.checkpoint()

    trio.run(quick, instruments=[instrument])
    assert instrument.slow_steps == 0


def test_the_setting_is_off_by_default_and_checked() -> None:
    assert TasksConfig().slow_task_step_ms == 0
    with pytest.raises(ValueError, match="slow_task_step_ms"):
        TasksConfig(slow_task_step_ms=-1)
