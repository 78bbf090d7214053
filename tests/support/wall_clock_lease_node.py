"""Test-only entry point: ``rillet node`` that times leases, sessions and ISR lags on the
wall clock (``steady_ms`` reads ``time.time``), as the broker did before broker.clock had a
steady clock.

The clock chaos test runs its nodes with this (``wrap`` below, under the clock shim) to
prove the clock faults catch a node whose timeouts follow a stepped wall clock: a controller
whose clock jumps hours ahead sees every broker's lease long expired and fences them all.
The fault exists only here: the installed command has no switch for it.
"""

from __future__ import annotations

import logging
import sys
import time
from functools import partial
from pathlib import Path

from rillet.broker.clock import SystemClock
from rillet.broker.node import Node
from rillet.cli import node_command
from rillet.cli.main import build_parser

ENTRY = ["-m", "rillet.cli.main"]


class WallClockLeases(SystemClock):
    """The system clock, but timeouts on the wall clock (the defect under test)."""

    def steady_ms(self) -> int:
        return time.time_ns() // 1_000_000


def wrap(node_id: int, argv: list[str]) -> list[str]:
    """A node's argv (``[python, -m, rillet.cli.main, ...]``) running this script instead."""
    assert argv[1:3] == ENTRY, argv
    return [argv[0], str(Path(__file__).resolve()), *argv[3:]]


def main() -> int:
    args = build_parser().parse_args(sys.argv[1:])
    logging.basicConfig(
        level=args.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    return node_command.run(args, make_node=partial(Node, clock=WallClockLeases()))


if __name__ == "__main__":
    sys.exit(main())
