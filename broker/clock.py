"""The one way the broker's middle layer reads time.

Why an interface: the replica, the replica manager's tasks, the fetch handlers, the ISR
manager and the follower fetcher all decide on time (lag windows, flush ages, record
timestamps, long polls). Reading it through a :class:`Clock` handed down from the node lets
tests run that code under a virtual clock (trio's ``MockClock`` with a clock derived from
it), so a 30 s ISR lag window takes no real time and a run is repeatable. The node passes
:data:`SYSTEM_CLOCK`; nothing else in the broker reads ``time`` for decisions.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now_ms(self) -> int:
        """Wall-clock time in milliseconds since the Unix epoch (record timestamps,
        retention, lag, deadlines shared with other nodes)."""
        ...

    def monotonic_s(self) -> float:
        """A clock that never goes back, in seconds (durations measured locally)."""
        ...


class SystemClock:
    """The operating system's clocks."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def monotonic_s(self) -> float:
        return time.monotonic()


SYSTEM_CLOCK: Clock = SystemClock()
