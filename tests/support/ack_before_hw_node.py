"""Test-only entry point: ``rillet node`` whose partition leaders answer acks=all right
after their own append, before the high watermark passes the batch.

The chaos smoke test runs its nodes with this in place of ``python -m rillet.cli.main``
(``wrap`` below), to prove the checker catches a broker that acknowledges what it cannot
keep. The fault exists only here: the installed command has no switch for it.
"""

from __future__ import annotations

import logging
import sys
from functools import partial
from pathlib import Path

from rillet.broker.handlers.context import InjectedFaults
from rillet.broker.node import Node
from rillet.cli import node_command
from rillet.cli.main import build_parser

ENTRY = ["-m", "rillet.cli.main"]


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
    faults = InjectedFaults(ack_before_high_watermark=True)
    return node_command.run(args, make_node=partial(Node, faults=faults))


if __name__ == "__main__":
    sys.exit(main())
