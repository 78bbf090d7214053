"""``rillet perf produce|consume``: throughput and latency, like kafka-*-perf-test.

Latency is measured on a sample (every ``--sample-every``-th record): the time from ``send``
to its acknowledgement. Sampling keeps the measurement from slowing the path it measures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

import trio

from rillet.broker.cli.common import add_bootstrap, run_async
from rillet.client import Admin, Consumer, Producer, TopicPartition
from rillet.client.accumulator import RecordFuture

PROGRESS_INTERVAL_S = 5.0


def register(sub: Any) -> None:
    perf = sub.add_parser("perf", help="measure produce or consume throughput")
    psub = perf.add_subparsers(dest="perf_command", required=True, metavar="WHAT")
    produce = psub.add_parser("produce", help="producer throughput and latency")
    produce.add_argument("--topic", required=True)
    produce.add_argument("--num-records", type=int, default=1_000_000)
    produce.add_argument("--record-size", type=int, default=100)
    produce.add_argument("--acks", default="1", choices=["all", "-1", "0", "1"])
    produce.add_argument("--batch-bytes", type=int, default=256 * 1024)
    produce.add_argument("--linger-ms", type=int, default=5)
    produce.add_argument("--throughput", type=int, default=-1, help="records/s cap; -1 none")
    produce.add_argument("--sample-every", type=int, default=100)
    produce.add_argument("--json", action="store_true", help="one JSON line on stdout")
    add_bootstrap(produce)
    produce.set_defaults(run=run_produce)
    consume = psub.add_parser("consume", help="consumer throughput from the beginning")
    consume.add_argument("--topic", required=True)
    consume.add_argument("--num-records", type=int, default=1_000_000)
    consume.add_argument("--json", action="store_true")
    add_bootstrap(consume)
    consume.set_defaults(run=run_consume)


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(int(q * len(sorted_values)), len(sorted_values) - 1)
    return sorted_values[index]


async def produce_perf(
    bootstrap: str,
    topic: str,
    num_records: int,
    record_size: int,
    acks: str,
    batch_bytes: int,
    linger_ms: int,
    throughput: int,
    sample_every: int,
    progress: bool,
) -> dict[str, Any]:
    payload = os.urandom(record_size)
    latencies_ms: list[float] = []

    def sampled(sent_at: float) -> Any:
        def done(fut: RecordFuture) -> None:
            latencies_ms.append((time.perf_counter() - sent_at) * 1000)

        return done

    async with Producer(
        bootstrap, acks=acks, batch_bytes=batch_bytes, linger_ms=linger_ms
    ) as producer:
        await (await producer.send(topic, payload))  # metadata and connection warm-up
        started = time.perf_counter()
        last_report = started
        send = producer.send
        for i in range(num_records):
            fut = await send(topic, payload)
            if i % sample_every == 0:
                fut.add_done_callback(sampled(time.perf_counter()))
                now = time.perf_counter()
                if throughput > 0:
                    ahead = i / throughput - (now - started)
                    if ahead > 0:
                        await trio.sleep(ahead)
                if progress and now - last_report >= PROGRESS_INTERVAL_S:
                    rate = i / (now - started)
                    print(f"{i} records sent, {rate:,.0f} records/s", file=sys.stderr)
                    last_report = now
        await producer.flush()
        elapsed = time.perf_counter() - started
    latencies_ms.sort()
    return {
        "bench": "produce",
        "records": num_records,
        "record_size": record_size,
        "acks": acks,
        "batch_bytes": batch_bytes,
        "linger_ms": linger_ms,
        "elapsed_s": round(elapsed, 3),
        "records_per_s": round(num_records / elapsed),
        "mb_per_s": round(num_records * record_size / elapsed / 1e6, 1),
        "latency_ms": {
            "avg": round(statistics.fmean(latencies_ms), 2) if latencies_ms else None,
            "p50": round(percentile(latencies_ms, 0.5), 2),
            "p95": round(percentile(latencies_ms, 0.95), 2),
            "p99": round(percentile(latencies_ms, 0.99), 2),
            "p99_9": round(percentile(latencies_ms, 0.999), 2),
            "max": round(latencies_ms[-1], 2) if latencies_ms else None,
        },
    }


async def consume_perf(bootstrap: str, topic: str, num_records: int) -> dict[str, Any]:
    async with Admin(bootstrap) as admin:
        (description,) = await admin.describe_topics([topic])
    tps = [TopicPartition(topic, p.partition) for p in description.partitions]
    count = 0
    size = 0
    async with Consumer(bootstrap, fetch_max_wait_ms=100) as consumer:
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        started = time.perf_counter()
        with trio.fail_after(max(60.0, num_records / 20_000)):
            while count < num_records:
                records = await consumer.poll(timeout_ms=1000)
                count += len(records)
                size += sum(len(r.value or b"") for r in records)
        elapsed = time.perf_counter() - started
    return {
        "bench": "consume",
        "records": count,
        "elapsed_s": round(elapsed, 3),
        "records_per_s": round(count / elapsed),
        "mb_per_s": round(size / elapsed / 1e6, 1),
    }


def _report(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:>14}: {value}")


def run_produce(args: argparse.Namespace) -> int:
    async def main() -> int:
        result = await produce_perf(
            args.bootstrap,
            args.topic,
            args.num_records,
            args.record_size,
            args.acks,
            args.batch_bytes,
            args.linger_ms,
            args.throughput,
            args.sample_every,
            progress=not args.json,
        )
        _report(result, args.json)
        return 0

    return run_async(main)


def run_consume(args: argparse.Namespace) -> int:
    async def main() -> int:
        _report(await consume_perf(args.bootstrap, args.topic, args.num_records), args.json)
        return 0

    return run_async(main)
