"""Test-only entry points: ``rillet node`` with a transaction fault injected.

``wrap_read_past_lso`` runs nodes whose read_committed fetches read to the high watermark
(past the last stable offset); ``wrap_skip_abort_markers`` runs nodes whose partition
leaders never write abort markers (they report them written). The transactional chaos
tests run nodes this way to prove the checker catches each; the installed command has no
switch for either.
"""

from __future__ import annotations

import logging
import sys
from functools import partial
from pathlib import Path

from rillet.broker.node import Node
from rillet.broker.runtime.injected_faults import InjectedFaults
from rillet.cli import node_command
from rillet.cli.main import build_parser

ENTRY = ["-m", "rillet.cli.main"]
FAULTS = {
    "read-past-lso": InjectedFaults(read_committed_past_lso=True),
    "skip-abort-markers": InjectedFaults(skip_abort_markers=True),
}


def _wrap(fault: str, node_id: int, argv: list[str]) -> list[str]:
    assert argv[1:3] == ENTRY, argv
    return [argv[0], str(Path(__file__).resolve()), fault, *argv[3:]]


def wrap_read_past_lso(node_id: int, argv: list[str]) -> list[str]:
    return _wrap("read-past-lso", node_id, argv)


def wrap_skip_abort_markers(node_id: int, argv: list[str]) -> list[str]:
    return _wrap("skip-abort-markers", node_id, argv)


def main() -> int:
    faults = FAULTS[sys.argv[1]]
    args = build_parser().parse_args(sys.argv[2:])
    logging.basicConfig(
        level=args.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    return node_command.run(args, make_node=partial(Node, faults=faults))


if __name__ == "__main__":
    sys.exit(main())
