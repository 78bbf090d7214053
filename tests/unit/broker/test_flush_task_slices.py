"""The flush task checks every hosted replica on each pass; with thousands of partitions
that one step held the event loop for up to 67 ms (slow-step log, 10,000 partitions). It
now yields once each slice of loop time is used up."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing
from broker_context import Middle, middle
from task_steps import TaskSteps

from rillet.broker import loop_slices

REPLICAS = 20


async def test_a_flush_pass_over_many_replicas_yields_between_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_clock: trio.testing.MockClock
) -> None:
    monkeypatch.setattr(loop_slices, "SLICE_S", 0.0)  # every check uses up a slice
    m = middle(tmp_path)
    for p in range(REPLICAS):
        m.host("t", p)
    async with trio.open_nursery() as nursery:
        task = await nursery.start(_flush_task, m)
        await trio.testing.wait_all_tasks_blocked()
        steps = TaskSteps(task)
        trio.lowlevel.add_instrument(steps)
        try:
            m.replicas._flush_wakeup.set()  # one pass now; nothing is due
            await trio.testing.wait_all_tasks_blocked()
        finally:
            trio.lowlevel.remove_instrument(steps)
        nursery.cancel_scope.cancel()
    assert steps.count > REPLICAS  # one step per replica, not one for the whole pass


async def _flush_task(m: Middle, task_status: trio.TaskStatus[trio.lowlevel.Task]) -> None:
    task_status.started(trio.lowlevel.current_task())
    await m.replicas.run_flush_task()
