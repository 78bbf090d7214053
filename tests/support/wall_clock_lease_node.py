"""Test-only entry point: ``rillet node`` that times leases, sessions and ISR lags on the
wall clock (``steady_ms`` reads ``time.time``), as the broker did before broker.clock had a
steady clock.

The clock chaos test runs its nodes with this (``wrap`` below, under the clock shim) to
prove the clock faults catch a node whose timeouts follow a stepped wall clock: a partition
leader whose clock stepped 3 h ahead and back holds its lags at the later time, keeps a
killed follower in the ISR and never takes it back. The fault exists only here: the
installed command has no switch for it.
"""

from __future__ import annotations

import sys
import time
from functools import partial
from pathlib import Path

from ack_before_hw_node import run_node, script_wrap

from rillet.broker.node import Node
from rillet.broker.runtime.clock import SystemClock


class WallClockLeases(SystemClock):
    """The system clock, but timeouts on the wall clock (the defect under test)."""

    def steady_ms(self) -> int:
        return time.time_ns() // 1_000_000


wrap = script_wrap(Path(__file__))

if __name__ == "__main__":
    sys.exit(run_node(partial(Node, clock=WallClockLeases())))
