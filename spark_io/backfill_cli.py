"""``rillet spark backfill``: the backfill job from the command line.

The rillet CLI adds it with ``add_parser(subparsers)`` (under its ``spark`` command); the
parser sets ``run`` to :func:`run`, which returns the exit status. Importing this module
needs neither PySpark nor pyarrow: they are loaded when the command runs, and their absence
is reported as one line with the install command.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from rillet.client.cluster import parse_bootstrap
from rillet.client.errors import RilletError
from rillet.client.security_arguments import add_security_arguments, security_of
from rillet.spark_io.errors import OptionError

BOOTSTRAP_ENV = "RILLET_BOOTSTRAP"
DEFAULT_BOOTSTRAP = "127.0.0.1:9092"
EXIT_OK = 0
EXIT_FAILED = 1


def _bootstrap(text: str) -> str:
    try:
        parse_bootstrap(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``backfill`` to ``subparsers`` (an argparse sub-parsers action)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "backfill",
        help="copy a topic's new committed records into Parquet (incremental, exactly once)",
        description=(
            "Read TOPIC from GROUP's committed offsets (the log start when it has none) to the "
            "high watermark, write the records to OUTPUT as Parquet partitioned by event "
            "date, then record the end offsets for GROUP. Re-running after a failure leaves "
            "no duplicates and no gaps (docs/spark.md)."
        ),
    )
    p.add_argument("--topic", required=True, help="the topic to copy")
    p.add_argument("--group", required=True, help="the group whose offsets mark progress")
    p.add_argument("--output", required=True, help="the Parquet dataset folder (local path)")
    p.add_argument(
        "--bootstrap",
        type=_bootstrap,
        default=os.environ.get(BOOTSTRAP_ENV, DEFAULT_BOOTSTRAP),
        help=f"host:port[,host:port] of any node (env {BOOTSTRAP_ENV}; default %(default)s)",
    )
    add_security_arguments(p)
    p.add_argument(
        "--offsets-store",
        choices=("group", "file"),
        default="group",
        help="keep offsets in the rillet consumer group (default) or in "
        "OUTPUT/_rillet_offsets/GROUP.json",
    )
    p.add_argument(
        "--event-time",
        default="timestamp",
        metavar="SQL",
        help="Spark SQL expression for a record's event time (default: its timestamp); its "
        "UTC date names the event_date partition",
    )
    p.add_argument("--include-headers", action="store_true", help="keep record headers")
    p.add_argument(
        "--no-fail-on-data-loss",
        dest="fail_on_data_loss",
        action="store_false",
        help="skip records deleted by retention instead of failing (leaves a gap)",
    )
    p.add_argument("--min-partitions", type=_positive, help="at least this many Spark tasks")
    p.add_argument(
        "--max-records-per-partition", type=_positive, help="at most this many records per task"
    )
    p.add_argument("--master", default="local[*]", help="Spark master (default %(default)s)")
    p.add_argument(
        "--conf",
        type=_key_value,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark configuration setting (repeatable)",
    )
    p.add_argument("--json", action="store_true", help="print the result as one JSON line")
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (it is drawn only when stderr is a terminal)",
    )
    p.set_defaults(run=run)
    return p


def session_conf(
    given: list[tuple[str, str]], no_progress: bool, stderr_is_tty: bool
) -> dict[str, str]:
    """The Spark settings of the run: ``--conf`` ones, and Spark's console progress bar
    (tasks done per stage, redrawn in place) for a person watching a terminal."""
    conf = {"spark.ui.showConsoleProgress": "true"} if stderr_is_tty and not no_progress else {}
    conf.update(given)
    return conf


def run(args: argparse.Namespace) -> int:
    """Run the backfill the parsed arguments describe; prints a summary, returns the exit
    status (failures are one line on stderr)."""
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as exc:
        print(
            f"rillet spark backfill needs PySpark and pyarrow ({exc}): "
            "pip install 'rillet[spark]' (and Java 17)",
            file=sys.stderr,
        )
        return EXIT_FAILED
    from pyspark.errors import PySparkException

    from rillet.spark_io.backfill_job import backfill
    from rillet.spark_io.backfill_output import ensure_free
    from rillet.spark_io.session import local_session

    try:  # a second run on the same output is refused before Spark starts
        ensure_free(Path(args.output).absolute())
    except RilletError as exc:
        print(f"backfill failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    conf = session_conf(args.conf, args.no_progress, sys.stderr.isatty())
    spark = local_session(master=args.master, app_name="rillet-backfill", conf=conf)
    try:
        result = backfill(
            spark,
            bootstrap=args.bootstrap,
            topic=args.topic,
            group=args.group,
            output=args.output,
            offsets_store=args.offsets_store,
            event_time=args.event_time,
            include_headers=args.include_headers,
            fail_on_data_loss=args.fail_on_data_loss,
            min_partitions=args.min_partitions,
            max_records_per_partition=args.max_records_per_partition,
            security=security_of(args),
        )
    except (RilletError, OptionError) as exc:
        print(f"backfill failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except PySparkException as exc:  # a task failed, or Spark cannot analyse --event-time
        print(f"backfill failed in Spark: {spark_error_line(exc)}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        spark.stop()
    if args.json:
        print(
            json.dumps(
                {
                    "topic": result.topic,
                    "group": result.group,
                    "output": result.output,
                    "start": result.start,
                    "end": result.end,
                    "rows": result.rows,
                    "range_dir": result.range_dir,
                    "replaced": result.replaced,
                    "seconds": round(result.seconds, 3),
                }
            )
        )
    else:
        print(result.summary())
    return EXIT_OK


def spark_error_line(exc: BaseException) -> str:
    """The line of a Spark error worth showing: the rillet error raised in a task (Spark
    wraps it in a Python traceback inside a Java one), else the first line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("rillet.") and "Error: " in line:
            return line.split(" SQLSTATE")[0]
    return lines[0] if lines else type(exc).__name__


def main(argv: list[str] | None = None) -> int:
    """``python -m rillet.spark_io.backfill_cli ...`` (the same as ``rillet spark
    backfill``)."""
    parser = argparse.ArgumentParser(prog="rillet spark")
    sub = parser.add_subparsers(dest="spark_command", required=True, metavar="COMMAND")
    add_parser(sub)
    args = parser.parse_args(argv)
    import logging

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    status: int = args.run(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
