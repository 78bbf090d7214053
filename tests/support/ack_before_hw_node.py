"""Test-only entry point: ``rillet node`` whose partition leaders answer acks=all right
after their own append, before the high watermark passes the batch.

The chaos smoke test runs its nodes with this in place of ``python -m rillet.cli.main``
(``wrap`` below), to prove the checker catches a broker that acknowledges what it cannot
keep. The fault exists only here: the installed command has no switch for it.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from rillet.broker.node import Node
from rillet.broker.runtime.injected_faults import InjectedFaults
from rillet.cli import node_command
from rillet.cli.main import build_parser

ENTRY = ["-m", "rillet.cli.main"]


def script_wrap(script: Path) -> Callable[[int, list[str]], list[str]]:
    """A node argv wrap (``[python, -m, rillet.cli.main, ...]``) running ``script`` instead."""

    def wrap(node_id: int, argv: list[str]) -> list[str]:
        assert argv[1:3] == ENTRY, argv
        return [argv[0], str(script.resolve()), *argv[3:]]

    return wrap


wrap = script_wrap(Path(__file__))


def run_node(make_node: Callable[..., Any]) -> int:
    """``rillet node`` with this argv, its node made by ``make_node`` (faults injected)."""
    args = build_parser().parse_args(sys.argv[1:])
    logging.basicConfig(
        level=args.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    return node_command.run(args, make_node=make_node)


def main() -> int:
    faults = InjectedFaults(ack_before_high_watermark=True)
    return run_node(partial(Node, faults=faults))


if __name__ == "__main__":
    sys.exit(main())
