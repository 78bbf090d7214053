"""Spark read throughput: N records (default 1,000,000 x 100 B) read by
``spark.read.format("rillet")`` into Spark's no-op sink in local[2], then the same records
copied to Parquet by the backfill job; prints rows/s of both as one JSON line.

The records are produced first (acks=1, not timed) into a new topic. A small read warms the
Spark Python workers up (their start is a one-time cost of a session, not of a read); each
timed read is a new DataFrame, so it includes planning (offset lookups). ``--repeat`` runs
the read several times and reports the median and every run. Needs PySpark, pyarrow and
Java 17 (``pip install -e '.[spark]'``).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from typing import Any

import trio
from _common import emit, ensure_topic, parser, target

from rillet.cli.perf_command import ProducePerfSpec, produce_perf


def read_df(spark: Any, bootstrap: str, topic: str, **options: str) -> Any:
    reader = spark.read.format("rillet").option("bootstrap", bootstrap).option("subscribe", topic)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--num-records", type=int, default=1_000_000)
    p.add_argument("--record-size", type=int, default=100)
    p.add_argument("--partitions", type=int, default=2)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--repeat", type=int, default=3, help="timed reads (median reported)")
    p.add_argument("--min-partitions", type=int, help="the reader's minPartitions option")
    p.add_argument("--skip-backfill", action="store_true")
    args = p.parse_args()
    topic = f"bench-spark-{time.time_ns()}"

    from rillet.spark_io.backfill_job import backfill
    from rillet.spark_io.session import local_session

    with target(args.bootstrap, args.nodes) as bootstrap:
        trio.run(ensure_topic, bootstrap, topic, args.partitions, args.replication_factor)
        trio.run(
            produce_perf,
            bootstrap,
            ProducePerfSpec(topic, args.num_records, args.record_size, acks="1"),
        )
        print(f"produced {args.num_records} records into {topic}", file=sys.stderr)
        began = time.perf_counter()
        spark = local_session(args.master, app_name="rillet-bench")
        session_s = time.perf_counter() - began
        options = {} if args.min_partitions is None else {"minPartitions": str(args.min_partitions)}
        # Warm-up: start the Python workers (one per core) with a small read.
        read_df(spark, bootstrap, topic, maxRecordsPerPartition="1000").limit(2000).collect()
        runs = []
        for _ in range(args.repeat):
            began = time.perf_counter()
            df = read_df(spark, bootstrap, topic, **options)
            df.write.format("noop").mode("overwrite").save()
            runs.append(time.perf_counter() - began)
            print(f"read: {args.num_records / runs[-1]:,.0f} rows/s", file=sys.stderr)
        count = read_df(spark, bootstrap, topic).count()
        result: dict[str, Any] = {
            "rows": count,
            "complete": count == args.num_records,
            "read_rows_per_s": round(args.num_records / statistics.median(runs)),
            "read_elapsed_s": [round(r, 3) for r in runs],
            "read_mb_per_s": round(
                args.num_records * args.record_size / statistics.median(runs) / 1e6, 1
            ),
            "session_start_s": round(session_s, 2),
        }
        if not args.skip_backfill:
            with tempfile.TemporaryDirectory(prefix="rillet-bench-parquet-") as out:
                began = time.perf_counter()
                done = backfill(
                    spark,
                    bootstrap=bootstrap,
                    topic=topic,
                    group="bench-backfill",
                    output=out,
                    offsets_store="file",
                )
                elapsed = time.perf_counter() - began
            result |= {
                "backfill_rows": done.rows,
                "backfill_rows_per_s": round(done.rows / elapsed),
                "backfill_elapsed_s": round(elapsed, 3),
            }
        spark.stop()
        emit(
            "spark_read",
            {**vars(args), "topic": topic, "bootstrap": bootstrap},
            result,
        )


if __name__ == "__main__":
    main()
