"""Counts the steps one trio task takes: how often it was scheduled (each step of a busy
node's task is a turn of every other runnable task)."""

from __future__ import annotations

import trio


class TaskSteps(trio.abc.Instrument):
    def __init__(self, task: trio.lowlevel.Task) -> None:
        self.task = task
        self.count = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task is self.task:
            self.count += 1
