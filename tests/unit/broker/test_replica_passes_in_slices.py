"""Tasks that pass over every hosted replica yield once each slice of loop time is used up.

With 10,000 partitions the slow-step log showed the flush task's pass (up to 67 ms) and the
ISR manager's pass over its leaders (12 ms a step on average, up to 82 ms) each holding the
event loop in one step. Each test forces a yield per replica (a slice of 0 s) and counts
the task's steps in one pass: one per replica, not one for the whole pass."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing
from broker_context import Middle, middle
from task_steps import TaskSteps

from rillet.broker import loop_slices
from rillet.broker.replication.isr_manager import IsrManager

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


async def test_an_isr_pass_over_many_leaders_yields_between_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_clock: trio.testing.MockClock
) -> None:
    monkeypatch.setattr(loop_slices, "SLICE_S", 0.0)
    m = middle(tmp_path)
    for p in range(REPLICAS):
        m.host("t", p)
    manager = IsrManager(m.ctx.config, m.replicas, None, m.ctx.metadata.auth, lambda: 7)  # type: ignore[arg-type]
    async with trio.open_nursery() as nursery:
        task = await nursery.start(_isr_task, manager)
        await trio.testing.wait_all_tasks_blocked()  # asleep until its first pass
        steps = TaskSteps(task)
        trio.lowlevel.add_instrument(steps)
        try:
            mock_clock.jump(1.0)  # one pass; every follower is still in its lag window
            await trio.testing.wait_all_tasks_blocked()
        finally:
            trio.lowlevel.remove_instrument(steps)
        nursery.cancel_scope.cancel()
    assert steps.count > REPLICAS


async def _isr_task(manager: IsrManager, task_status: trio.TaskStatus[trio.lowlevel.Task]) -> None:
    task_status.started(trio.lowlevel.current_task())
    await manager.run()
