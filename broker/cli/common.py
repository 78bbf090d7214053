"""What every client-side command shares: the --bootstrap option and error reporting."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Awaitable, Callable

import trio

from rillet.client.errors import RilletError

DEFAULT_BOOTSTRAP = "127.0.0.1:9092"


def add_bootstrap(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bootstrap",
        default=os.environ.get("RILLET_BOOTSTRAP", DEFAULT_BOOTSTRAP),
        help="host:port[,host:port] of any node (env RILLET_BOOTSTRAP; default %(default)s)",
    )


def run_async(main: Callable[[], Awaitable[int]]) -> int:
    """Run a command's coroutine; typed client errors become one line and exit code 1."""
    code = 1
    try:
        code = trio.run(main)
    except* RilletError as group:
        for exc in group.exceptions:
            print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
    return code
