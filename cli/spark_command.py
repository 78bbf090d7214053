"""``rillet spark backfill``: the Spark backfill job (docs/spark.md), from spark_io."""

from __future__ import annotations

from typing import Any

from rillet.spark_io import backfill_cli


def register(sub: Any) -> None:
    spark = sub.add_parser("spark", help="Spark jobs (needs pip install -e '.[spark]' and Java 17)")
    ssub = spark.add_subparsers(dest="spark_command", required=True, metavar="JOB")
    backfill_cli.add_parser(ssub)
