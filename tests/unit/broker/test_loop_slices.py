"""A time slicer yields to the event loop only once its slice of (clock) time is used up."""

from __future__ import annotations

import trio
import trio.testing
from task_steps import TaskSteps

from rillet.broker.runtime.loop_slices import TimeSlicer


async def test_it_yields_once_the_slice_is_used_up(mock_clock: trio.testing.MockClock) -> None:
    slicer = TimeSlicer(0.005)
    steps = TaskSteps(trio.lowlevel.current_task())
    trio.lowlevel.add_instrument(steps)
    try:
        for _ in range(100):
            await slicer.step()  # the clock stands still: no yield
        assert steps.count == 0
        mock_clock.jump(0.005)
        await slicer.step()  # used up: one yield, and a new slice starts
        assert steps.count == 1
        await slicer.step()
        assert steps.count == 1
    finally:
        trio.lowlevel.remove_instrument(steps)
