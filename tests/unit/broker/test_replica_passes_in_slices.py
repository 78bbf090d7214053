"""Tasks that pass over every hosted replica yield once each slice of loop time is used up.

With 10,000 partitions the slow-step log showed the flush task's pass (up to 67 ms) and the
ISR manager's pass over its leaders (12 ms a step on average, up to 82 ms) each holding the
event loop in one step. Each test forces a yield per replica (a slice of 0 s) and counts
the task's steps in one pass: one per replica, not one for the whole pass."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import trio
import trio.testing
from broker_context import Middle, middle
from task_steps import TaskSteps

from rillet.broker.replica.replication.isr_manager import IsrManager
from rillet.broker.runtime import loop_slices

REPLICAS = 20


async def test_a_flush_pass_over_many_replicas_yields_between_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_clock: trio.testing.MockClock
) -> None:
    m = many_replicas(tmp_path, monkeypatch)

    def one_pass() -> None:
        m.replicas._flush_wakeup.set()  # one pass now; nothing is due

    assert await steps_in_one_pass(m.replicas.run_flush_task, one_pass) > REPLICAS


async def test_an_isr_pass_over_many_leaders_yields_between_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_clock: trio.testing.MockClock
) -> None:
    m = many_replicas(tmp_path, monkeypatch)
    manager = IsrManager(m.ctx.config, m.replicas, None, m.ctx.metadata.auth, lambda: 7)  # type: ignore[arg-type]

    def one_pass() -> None:
        mock_clock.jump(1.0)  # one pass; every follower is still in its lag window

    assert await steps_in_one_pass(manager.run, one_pass) > REPLICAS


def many_replicas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Middle:
    monkeypatch.setattr(loop_slices, "SLICE_S", 0.0)  # every item uses up a slice
    m = middle(tmp_path)
    for p in range(REPLICAS):
        m.host("t", p)
    return m


async def steps_in_one_pass(
    run: Callable[[], Awaitable[None]], one_pass: Callable[[], None]
) -> int:
    """How many steps the task running ``run`` takes from ``one_pass()`` until it waits again
    (one step per replica with slices, one for the whole pass without)."""

    async def task(task_status: trio.TaskStatus[trio.lowlevel.Task]) -> None:
        task_status.started(trio.lowlevel.current_task())
        await run()

    async with trio.open_nursery() as nursery:
        steps = TaskSteps(await nursery.start(task))
        await trio.testing.wait_all_tasks_blocked()  # waiting for its next pass
        trio.lowlevel.add_instrument(steps)
        try:
            one_pass()
            await trio.testing.wait_all_tasks_blocked()
        finally:
            trio.lowlevel.remove_instrument(steps)
        nursery.cancel_scope.cancel()
    return steps.count
