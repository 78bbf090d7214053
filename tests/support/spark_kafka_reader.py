"""Read one rillet topic with Spark's own Kafka source and with format("rillet"); print JSON.

Run as a separate process (``python spark_kafka_reader.py ...``): the Kafka connector comes
through ``spark.jars.packages``, which only a freshly started JVM takes, so it cannot share
the test run's SparkSession. Prints one JSON object on stdout with the rows each way read:
``kafka`` (batch, the Kafka source), ``rillet`` (batch, format("rillet")) and ``stream``
(the Kafka source in a streaming query, trigger availableNow, into a memory sink). Exits 3
with a one-line reason on stderr when the connector cannot be resolved.

With ``--txn-write-rows N`` it first writes N rows to the topic with format("rillet")'s
``transactional`` option, in two Spark partitions, the last row's task failing once after
writing (so Spark retries it: ``--master local[2,2]``); ``--isolation read_committed`` makes
the Kafka source read with ``kafka.isolation.level=read_committed``; the JSON then also says
whether the injected failure happened (``failed_once``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any

COLUMNS = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]
NO_CONNECTOR_EXIT = 3


def _rows(df: Any) -> list[list[Any]]:
    out = []
    for r in df.select(*COLUMNS).orderBy("partition", "offset").collect():
        headers = None
        if r.headers is not None:
            headers = [
                [h.key, None if h.value is None else bytes(h.value).hex()] for h in r.headers
            ]
        out.append(
            [
                None if r.key is None else bytes(r.key).hex(),
                None if r.value is None else bytes(r.value).hex(),
                r.topic,
                r.partition,
                r.offset,
                r.timestamp.isoformat(),
                r.timestampType,
                headers,
            ]
        )
    return out


def _write_failing_once(spark: Any, bootstrap: str, topic: str, args: Any) -> bool:
    """Write ``args.txn_write_rows`` rows transactionally in two tasks; the task holding the
    last row fails on its first attempt at that row, once half of its rows are in the topic
    (the other task's rows and those: polled, within a deadline). True when the failure
    happened (a marker file says so)."""
    from pyspark import TaskContext
    from pyspark.sql.functions import col, udf

    from rillet.client import BlockingConsumer, TopicPartition

    last = args.txn_write_rows - 1
    per_task = args.txn_write_rows // 2
    marker = os.path.join(tempfile.mkdtemp(), "failed")

    def wait_for_records(count: int) -> None:
        deadline = time.monotonic() + 120
        tps = [TopicPartition(topic, p) for p in range(3)]
        with BlockingConsumer(bootstrap) as consumer:
            while sum(consumer.end_offsets(tps).values()) < count:
                if time.monotonic() > deadline:
                    return  # the test's check of the aborted records says so
                time.sleep(0.1)

    @udf("string")  # type: ignore[misc]
    def fail_once(n: int) -> str:
        context = TaskContext.get()
        if n == last and context is not None and context.attemptNumber() == 0:
            wait_for_records(per_task + per_task // 2)
            open(marker, "w").close()
            raise RuntimeError("injected task failure after writing")
        return f"row-{n}"

    df = spark.range(0, args.txn_write_rows, numPartitions=2).select(
        fail_once(col("id")).alias("value")
    )
    df.write.format("rillet").option("bootstrap", bootstrap).option("topic", topic).option(
        "transactional", "true"
    ).mode("append").save()
    return os.path.exists(marker)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kafka-bootstrap", required=True)
    parser.add_argument("--rillet-bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--connector-version", required=True)
    parser.add_argument("--ivy-dir", required=True)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--isolation", default=None)
    parser.add_argument("--txn-write-rows", type=int, default=0)
    args = parser.parse_args()

    from rillet.spark_io.session import local_session

    package = f"org.apache.spark:spark-sql-kafka-0-10_2.13:{args.connector_version}"
    try:
        spark = local_session(
            args.master,
            app_name="rillet-spark-kafka-source",
            conf={
                "spark.jars.packages": package,
                "spark.jars.ivy": args.ivy_dir,
                # Rows reach the writer in small batches, so a task writes while it runs.
                "spark.sql.execution.arrow.maxRecordsPerBatch": "100",
            },
            log_level=os.environ.get("RILLET_SPARK_LOG_LEVEL", "error"),
        )
    except Exception as exc:  # the JVM exits when Ivy cannot resolve the package
        print(f"cannot start Spark with {package}: {exc}".splitlines()[0], file=sys.stderr)
        return NO_CONNECTOR_EXIT
    failed_once = False
    try:
        if args.txn_write_rows:
            failed_once = _write_failing_once(spark, args.rillet_bootstrap, args.topic, args)
        kafka_options = {"kafka.bootstrap.servers": args.kafka_bootstrap}
        if args.isolation:
            kafka_options["kafka.isolation.level"] = args.isolation
        kafka = (
            spark.read.format("kafka")
            .options(**kafka_options)
            .option("subscribe", args.topic)
            .option("startingOffsets", "earliest")
            .option("endingOffsets", "latest")
            .option("includeHeaders", "true")
            .load()
        )
        rillet = (
            spark.read.format("rillet")
            .option("bootstrap", args.rillet_bootstrap)
            .option("subscribe", args.topic)
            .option("includeHeaders", "true")
            .load()
        )
        stream = (
            spark.readStream.format("kafka")
            .options(**kafka_options)
            .option("subscribe", args.topic)
            .option("startingOffsets", "earliest")
            .option("includeHeaders", "true")
            .load()
        )
        with tempfile.TemporaryDirectory() as checkpoint:
            query = (
                stream.writeStream.format("memory")
                .queryName("from_kafka_source")
                .option("checkpointLocation", checkpoint)
                .trigger(availableNow=True)
                .start()
            )
            query.awaitTermination(240)
            query.stop()
        streamed = spark.sql("select * from from_kafka_source")
        result = {
            "kafka": _rows(kafka),
            "rillet": _rows(rillet),
            "stream": _rows(streamed),
            "failed_once": failed_once,
        }
    finally:
        spark.stop()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
