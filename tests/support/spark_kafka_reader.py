"""Read one rillet topic with Spark's own Kafka source and with format("rillet"); print JSON.

Run as a separate process (``python spark_kafka_reader.py ...``): the Kafka connector comes
through ``spark.jars.packages``, which only a freshly started JVM takes, so it cannot share
the test run's SparkSession. Prints one JSON object on stdout with the rows each way read:
``kafka`` (batch, the Kafka source), ``rillet`` (batch, format("rillet")) and ``stream``
(the Kafka source in a streaming query, trigger availableNow, into a memory sink). Exits 3
with a one-line reason on stderr when the connector cannot be resolved.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kafka-bootstrap", required=True)
    parser.add_argument("--rillet-bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--connector-version", required=True)
    parser.add_argument("--ivy-dir", required=True)
    args = parser.parse_args()

    from rillet.spark_io.session import local_session

    package = f"org.apache.spark:spark-sql-kafka-0-10_2.13:{args.connector_version}"
    try:
        spark = local_session(
            "local[2]",
            app_name="rillet-spark-kafka-source",
            conf={"spark.jars.packages": package, "spark.jars.ivy": args.ivy_dir},
            log_level=os.environ.get("RILLET_SPARK_LOG_LEVEL", "error"),
        )
    except Exception as exc:  # the JVM exits when Ivy cannot resolve the package
        print(f"cannot start Spark with {package}: {exc}".splitlines()[0], file=sys.stderr)
        return NO_CONNECTOR_EXIT
    try:
        kafka = (
            spark.read.format("kafka")
            .option("kafka.bootstrap.servers", args.kafka_bootstrap)
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
            .option("kafka.bootstrap.servers", args.kafka_bootstrap)
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
        result = {"kafka": _rows(kafka), "rillet": _rows(rillet), "stream": _rows(streamed)}
    finally:
        spark.stop()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
