"""The one way the broker's middle layer reads time.

Why an interface: the replica, the replica manager's tasks, the fetch handlers, the ISR
manager and the follower fetcher all decide on time (lag windows, flush ages, record
timestamps, long polls). Reading it through a :class:`Clock` handed down from the node lets
tests run that code under a virtual clock (trio's ``MockClock`` with a clock derived from
it), so a 30 s ISR lag window takes no real time and a run is repeatable. The node passes
:data:`SYSTEM_CLOCK`; nothing else in the broker reads ``time`` for decisions.

Two kinds of time: ``now_ms`` is the wall clock, for what Kafka ties to it (record
timestamps and the timestamp policy, retention, segment roll); ``steady_ms`` is for every
timeout, lease and lag (broker sessions, group sessions, ISR lag, settle windows). A wall
clock stepped hours ahead or back (a bad NTP step, an operator's ``date -s``) must not
expire every broker's lease at once, nor keep a dead follower in the ISR for hours, so
``steady_ms`` is the wall clock read once, at start, advanced by the monotonic clock since:
it never jumps, runs at the wall clock's rate (NTP slews the monotonic clock too) and stays
close enough to wall time to be stamped into metadata records.
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

    def steady_ms(self) -> int:
        """Milliseconds that never jump (timeouts, leases, lags): see the module's note."""
        ...


class SystemClock:
    """The operating system's clocks (``steady_ms`` anchored when this is made)."""

    def __init__(self) -> None:
        self._anchor_ns = time.time_ns() - time.monotonic_ns()

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def monotonic_s(self) -> float:
        return time.monotonic()

    def steady_ms(self) -> int:
        return (self._anchor_ns + time.monotonic_ns()) // 1_000_000


SYSTEM_CLOCK: Clock = SystemClock()
