"""Long stretches of per-partition work cut into slices of event-loop time.

A node with thousands of partitions has loops over all of them: applying a follower fetch's
answers (a write to each log), recomputing fetch positions, installing roles. Done in one
stretch, each held the event loop for tens of milliseconds, and several such tasks in one
scheduler round added up to stalls of hundreds (every other request waits that long). A
count of partitions per slice does not bound the time, since the work per partition
varies by two orders of magnitude (a position lookup, a write); a clock does.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TypeVar

import trio

T = TypeVar("T")

# Longest stretch of such work before yielding to the event loop.
SLICE_S = 0.005


class TimeSlicer:
    """Yields to the event loop once ``slice_s`` of work has run since the last yield."""

    def __init__(self, slice_s: float | None = None) -> None:
        self._slice_s = SLICE_S if slice_s is None else slice_s
        self._since = trio.current_time()

    async def step(self) -> None:
        """Call between two items of work: a checkpoint when the slice is used up."""
        if trio.current_time() - self._since >= self._slice_s:
            await trio.lowlevel.checkpoint()
            self._since = trio.current_time()


def run_whole(work: Generator[None, None, T]) -> T:
    """The result of ``work`` (a generator that yields between items), run in one stretch:
    for callers that must answer at once and know the work is small."""
    while (result := _advance(work)) is _UNFINISHED:
        pass
    return result  # type: ignore[return-value]


async def run_in_slices(work: Generator[None, None, T]) -> T:
    """The result of ``work`` (a generator that yields between items), yielding to the
    event loop whenever a slice is used up."""
    slicer = TimeSlicer()
    while (result := _advance(work)) is _UNFINISHED:
        await slicer.step()
    return result  # type: ignore[return-value]


_UNFINISHED = object()


def _advance(work: Generator[None, None, T]) -> T | object:
    """One item of ``work``: its result once it has returned, else :data:`_UNFINISHED`."""
    try:
        next(work)
    except StopIteration as done:
        result: T = done.value
        return result
    return _UNFINISHED
