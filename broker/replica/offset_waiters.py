"""Requests waiting for a partition offset to reach a target within one leadership.

An acks=all produce waits for the high watermark to pass its batches; a DeleteRecords waits
for the in-sync replicas' log starts to reach its offset. Both only count while this replica
leads in the epoch the wait began in: an offset reached as a follower, or in a later
leadership, proves nothing about what the earlier leader did (its batches may have been
truncated in between). A wait ends with True when the target is reached, False when the
leadership ends or the partition is deleted (then every waiter is released).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import trio


@dataclass(eq=False, slots=True)
class _Waiter:
    target: int
    leader_epoch: int
    event: trio.Event = field(default_factory=trio.Event)
    reached: bool = False


class OffsetWaiters:
    """The waiters on one offset of one partition, released in bulk as the offset moves."""

    def __init__(self) -> None:
        self._waiters: list[_Waiter] = []

    def __len__(self) -> int:
        return len(self._waiters)

    async def wait(self, target: int, leader_epoch: int) -> bool:
        """Until :meth:`advance` reaches ``target`` in ``leader_epoch`` (True) or
        :meth:`release_all` (False)."""
        waiter = _Waiter(target, leader_epoch)
        self._waiters.append(waiter)
        try:
            await waiter.event.wait()
        finally:
            if not waiter.event.is_set() and waiter in self._waiters:
                self._waiters.remove(waiter)
        return waiter.reached

    def advance(self, offset: int, leader_epoch: int) -> None:
        """The offset is now ``offset`` in ``leader_epoch``: wake the waiters it satisfies."""
        if not self._waiters:
            return
        still = []
        for waiter in self._waiters:
            if offset >= waiter.target and waiter.leader_epoch == leader_epoch:
                waiter.reached = True
                waiter.event.set()
            else:
                still.append(waiter)
        self._waiters = still

    def release_all(self) -> None:
        """The leadership ended (or the partition is going): every wait answers False."""
        for waiter in self._waiters:
            waiter.event.set()
        self._waiters.clear()
