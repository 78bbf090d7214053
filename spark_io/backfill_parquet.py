"""Writing one offset range of a topic as Parquet, partitioned by the records' event date.

This is the step of the backfill job that runs in Spark: it reads exactly ``[start, end)``
with ``format("rillet")`` (``assign`` and offsets JSON, so the reader plans nothing of its
own) and writes it into the run's staging folder. PySpark is imported only when it runs, so
the rest of the job, and its command line, import without PySpark.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rillet.client.security import ClientSecurity
from rillet.client.types import TopicPartition
from rillet.spark_io.offsets_codec import offsets_json

EVENT_DATE = "event_date"
MICROS_PER_DAY = 86_400_000_000


def event_date_expr(event_time: str) -> str:
    """SQL for the UTC calendar date of ``event_time`` (a timestamp expression), independent
    of the session time zone."""
    return (
        f"date_from_unix_date(CAST(floor(unix_micros(({event_time})) / {MICROS_PER_DAY}) AS INT))"
    )


def write_parquet(
    spark: Any,
    staging: Path,
    *,
    bootstrap: str,
    topic: str,
    start: dict[TopicPartition, int],
    end: dict[TopicPartition, int],
    event_time: str,
    include_headers: bool,
    fail_on_data_loss: bool,
    min_partitions: int | None,
    max_records_per_partition: int | None,
    request_timeout_ms: int,
    security: ClientSecurity | None = None,
) -> int:
    """Read exactly ``[start, end)`` and write it to ``staging``; returns the rows written."""
    from pyspark.sql import functions as F  # noqa: N812

    from rillet.spark_io.datasource import register

    register(spark)
    reader = (
        spark.read.format("rillet")
        .option("bootstrap", bootstrap)
        .option("assign", json.dumps({topic: sorted(tp.partition for tp in start)}))
        .option("startingOffsets", offsets_json(start))
        .option("endingOffsets", offsets_json(end))
        .option("includeHeaders", str(include_headers).lower())
        .option("failOnDataLoss", str(fail_on_data_loss).lower())
        .option("requestTimeoutMs", str(request_timeout_ms))
    )
    for name, value in security_options(security).items():
        reader = reader.option(name, value)
    if min_partitions is not None:
        reader = reader.option("minPartitions", str(min_partitions))
    if max_records_per_partition is not None:
        reader = reader.option("maxRecordsPerPartition", str(max_records_per_partition))
    df = reader.load().withColumn(EVENT_DATE, F.expr(event_date_expr(event_time)))
    df.write.mode("errorifexists").partitionBy(EVENT_DATE).parquet(str(staging))
    rows: int = spark.read.parquet(str(staging)).count()
    return rows


def security_options(security: ClientSecurity | None) -> dict[str, str]:
    """The data source's ``ssl.*`` and ``sasl.*`` options for ``security``."""
    if security is None:
        return {}
    files = {
        "ssl.cafile": security.ssl_cafile,
        "ssl.certfile": security.ssl_certfile,
        "ssl.keyfile": security.ssl_keyfile,
    }
    options = {k: v for k, v in files.items() if v}
    if security.sasl is not None:
        options["sasl.mechanism"] = security.sasl.mechanism
        options["sasl.username"] = security.sasl.username
        options["sasl.password"] = security.sasl.password
    return options
