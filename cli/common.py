"""What every client-side command shares: --bootstrap, KEY=VALUE options and error reporting.

Commands are run for people at a terminal and for scripts: a typed client error (no node
reachable, topic exists, ...) must come out as one readable line and exit status 1, never as a
traceback; bad arguments are caught by argparse (exit status 2) before any connection is made.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

import trio

from rillet.client.admin import Admin
from rillet.client.cluster import parse_bootstrap
from rillet.client.errors import ClientTimeoutError, ConnectionFailedError, RilletError
from rillet.client.security_arguments import add_security_arguments, security_of
from rillet.client.types import TopicPartition

DEFAULT_BOOTSTRAP = "127.0.0.1:9092"
BOOTSTRAP_ENV = "RILLET_BOOTSTRAP"
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what `seq 1000 | head -1` gives seq


def bootstrap_arg(text: str) -> str:
    """argparse type for host:port[,host:port]: checked here so a typo is a usage error."""
    try:
        parse_bootstrap(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_bootstrap(parser: argparse.ArgumentParser) -> None:
    """Add --bootstrap and the TLS options; defaults are read when the parser is built
    (environment variables override them)."""
    parser.add_argument(
        "--bootstrap",
        type=bootstrap_arg,
        default=os.environ.get(BOOTSTRAP_ENV, DEFAULT_BOOTSTRAP),
        help=f"host:port[,host:port] of any node (env {BOOTSTRAP_ENV}; default %(default)s)",
    )
    add_tls_options(parser)


def add_tls_options(parser: argparse.ArgumentParser) -> None:
    """--ssl-cafile, --ssl-certfile, --ssl-keyfile (defaults from RILLET_SSL_*), and
    --sasl-mechanism, --sasl-username, --sasl-password (defaults from RILLET_SASL_*)."""
    add_security_arguments(parser)


def client_options(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments for a client of the command's cluster: TLS when an --ssl-* option
    (or its environment variable) is given, a SASL login when a --sasl-* one is."""
    return security_of(args).client_options()


def key_value_arg(text: str) -> tuple[str, str]:
    """argparse type for KEY=VALUE options (--config, --header); VALUE may be empty."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def run_async(main: Callable[[], Awaitable[int]]) -> int:
    """Run a command's coroutine under trio and turn its expected failures into exit codes.

    RilletError -> one line on stderr and 1; Ctrl-C -> 130; a closed stdout (``| head``) ->
    141 without a word. Anything else is a bug and keeps its traceback.
    """
    code = EXIT_FAILED
    try:
        code = trio.run(main)
    except* RilletError as group:
        for exc in group.exceptions:
            print(error_line(exc), file=sys.stderr)
        code = EXIT_FAILED
    except* KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except* BrokenPipeError:
        silence_stdout()
        code = EXIT_BROKEN_PIPE
    return code


# What the two ways of not getting an answer mean, said once at the end of the error line.
REFUSED_HINT = "connections refused: is the cluster running, and is --bootstrap right?"
BUSY_HINT = (
    "nodes busy: the connection was accepted but not answered in time "
    "(a node paused or overloaded); try again, or check the nodes' logs"
)


def error_line(exc: BaseException) -> str:
    """``error: Type: message``, plus what a refused connection or a timeout means."""
    line = f"error: {type(exc).__name__}: {exc}"
    if isinstance(exc, ConnectionFailedError):
        return f"{line} ({REFUSED_HINT})"
    if isinstance(exc, ClientTimeoutError):
        return f"{line} ({BUSY_HINT})"
    return line


def silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again.

    (The recipe from the Python docs' note on SIGPIPE.)
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)


def add_output(parser: argparse.ArgumentParser) -> None:
    """Add --output text|json: a table for people, or one JSON document for scripts."""
    parser.add_argument(
        "--output",
        choices=["text", "json"],
        default="text",
        help="text (default) or json (one JSON document on stdout)",
    )


def print_json(document: object) -> None:
    print(json.dumps(document, separators=(",", ":"), ensure_ascii=False))


def print_table(rows: list[tuple[str, ...]]) -> None:
    """Left-aligned columns two spaces apart (no trailing blanks: easy to diff and grep)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def timestamp_ms_arg(text: str) -> int:
    """argparse type for a point in time: epoch milliseconds, or ISO 8601
    (``2026-11-24T10:00:00Z``, ``2026-11-24 10:00:00+01:00``, ``2026-11-24``; no zone = UTC).

    Checked while parsing, so a typo is a usage error (exit 2), not a traceback.
    """
    stripped = text.strip()
    if stripped.isdigit():
        return int(stripped)
    try:
        when = datetime.datetime.fromisoformat(stripped)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected ISO 8601 (e.g. 2026-11-24T10:00:00Z) or epoch milliseconds, got {text!r}"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    ms = int(when.timestamp() * 1000)
    if ms < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is before 1970")
    return ms


def write_all(out: TextIO, text: str) -> None:
    """Write ``text`` to ``out`` now, raising BrokenPipeError once the reader has gone.

    Through the io stack a large write into a pipe whose reader closes mid-way returns short
    and the rest is dropped without an error, so ``consume | head`` would run on to its end
    and exit 0. On a real file descriptor the bytes go out with os.write until all are taken:
    the write after a short one fails with EPIPE.
    """
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation: not a file
        out.write(text)
        out.flush()
        return
    out.flush()
    data = memoryview(text.encode(out.encoding or "utf-8", out.errors or "strict"))
    while data:
        written = os.write(fd, data)
        data = data[written:]


def add_partition_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--partition N``, repeatable, into ``args.partitions`` (none: every partition, see
    ``chosen_partitions``)."""
    parser.add_argument(
        "--partition",
        dest="partitions",
        type=int,
        action="append",
        default=[],
        metavar="N",
        help=help_text,
    )


async def chosen_partitions(
    admin: Admin, topic: str, partitions: list[int]
) -> list[TopicPartition]:
    """The partitions of ``topic`` named with ``--partition``, or all of them when none
    were (an unknown topic raises, one error line)."""
    if not partitions:
        (described,) = await admin.describe_topics([topic])
        partitions = [p.partition for p in described.partitions]
    return [TopicPartition(topic, p) for p in partitions]
