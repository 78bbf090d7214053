"""``rillet`` command line: one sub-command module per area, registered here."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

from rillet.cli import (
    acls_command,
    chaos_command,
    cluster_command,
    console_command,
    demo_command,
    groups_command,
    node_command,
    perf_command,
    scrub_command,
    spark_command,
    topics_command,
    users_command,
)
from rillet.cli.build_info import version_line
from rillet.cli.common import EXIT_BROKEN_PIPE, silence_stdout

# Each module exposes register(subparsers) and sets a "run" default on its parsers.
COMMAND_MODULES: list[ModuleType] = [
    node_command,
    cluster_command,
    topics_command,
    groups_command,
    console_command,
    perf_command,
    demo_command,
    chaos_command,
    spark_command,
    scrub_command,
    users_command,
    acls_command,
]

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def log_level_arg(text: str) -> str:
    """argparse type for --log-level: any case, one of LOG_LEVELS (a usage error otherwise)."""
    level = text.upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(LOG_LEVELS)}, got {text!r}")
    return level


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rillet", description="rillet: a replicated log service (Kafka's model, in Python)"
    )
    parser.add_argument("--version", action="version", version=version_line())
    parser.add_argument(
        "--log-level",
        type=log_level_arg,
        default="INFO",
        help="DEBUG, INFO, WARNING or ERROR (default INFO)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `rillet ... | head`: the reader left; say nothing (SIGPIPE)
        silence_stdout()
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
