"""``rillet perf produce|consume``: throughput and latency, in the style of kafka-*-perf-test.

The producer side sends as fast as it can (or at ``--throughput`` records/s) and measures
send-to-acknowledgement latency on a sample of records: timing every record would cost as much
as the client's own per-record work and distort the figure it measures. Sampled records also
carry the error check, so a run whose records fail stops with the error instead of printing a
throughput. The consumer side reads a topic from the beginning and reports records/s and MB/s.

``produce_perf`` and ``consume_perf`` are also the engines of the bench/ scripts.
MB is 10**6 bytes.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO

import trio

from rillet.cli.common import (
    add_bootstrap,
    client_options,
    non_negative_int,
    positive_int,
    run_async,
)
from rillet.cli.topic_watch import deleted_error, topic_exists
from rillet.client import Admin, Consumer, Producer, RecordFuture, TopicPartition
from rillet.client.producer import DEFAULT_BATCH_BYTES
from rillet.wire.compression import Compression

PROGRESS_INTERVAL_S = 5.0
TARGET_SAMPLES = 50_000  # --sample-every 0 samples about this many records per run
CLOCK_EVERY = 64  # unthrottled runs read the clock once per this many records
POLL_MS = 1000
COMPRESSIONS = [c.name.lower() for c in Compression]
PERCENTILES = (("p50", 0.5), ("p95", 0.95), ("p99", 0.99), ("p99_9", 0.999))


def register(sub: Any) -> None:
    perf = sub.add_parser("perf", help="measure produce or consume throughput and latency")
    psub = perf.add_subparsers(dest="perf_command", required=True, metavar="WHAT")

    produce = psub.add_parser("produce", help="producer throughput and send-to-ack latency")
    produce.add_argument("--topic", required=True)
    produce.add_argument("--num-records", type=positive_int, required=True)
    produce.add_argument("--record-size", type=non_negative_int, default=100, help="bytes")
    produce.add_argument("--acks", default="1", choices=["all", "-1", "0", "1"])
    produce.add_argument("--batch-bytes", type=positive_int, default=DEFAULT_BATCH_BYTES)
    produce.add_argument("--linger-ms", type=non_negative_int, default=5)
    produce.add_argument("--compression", default="none", choices=COMPRESSIONS)
    produce.add_argument(
        "--throughput", type=float, default=-1, help="cap in records/s; -1 (default): no cap"
    )
    produce.add_argument(
        "--sample-every",
        type=non_negative_int,
        default=0,
        help=f"time every Nth record (default 0: about {TARGET_SAMPLES:,} samples per run)",
    )
    produce.add_argument("--json", action="store_true", help="one JSON line on stdout")
    add_bootstrap(produce)
    produce.set_defaults(run=run_produce)

    consume = psub.add_parser("consume", help="consumer throughput from the beginning")
    consume.add_argument("--topic", required=True)
    consume.add_argument("--num-records", type=positive_int, required=True)
    consume.add_argument(
        "--timeout-ms",
        type=positive_int,
        default=10_000,
        help="give up after this long without a record (default 10000)",
    )
    consume.add_argument("--fetch-max-wait-ms", type=non_negative_int, default=500)
    consume.add_argument("--max-partition-fetch-bytes", type=positive_int, default=1 << 20)
    consume.add_argument("--json", action="store_true", help="one JSON line on stdout")
    add_bootstrap(consume)
    consume.set_defaults(run=run_consume)


# -- statistics -------------------------------------------------------------------------


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of already sorted values (nan when there are none)."""
    if not sorted_values:
        return math.nan
    rank = max(math.ceil(q * len(sorted_values)), 1)
    return sorted_values[min(rank, len(sorted_values)) - 1]


def latency_summary(values_ms: Sequence[float]) -> dict[str, float | int | None]:
    """avg, p50, p95, p99, p99.9 and max in ms (None without samples), and the sample count."""
    ordered = sorted(values_ms)
    out: dict[str, float | int | None] = {"samples": len(ordered)}
    if not ordered:
        out.update({k: None for k in ("avg", *(name for name, _ in PERCENTILES), "max")})
        return out
    out["avg"] = round(math.fsum(ordered) / len(ordered), 3)
    for name, q in PERCENTILES:
        out[name] = round(percentile(ordered, q), 3)
    out["max"] = round(ordered[-1], 3)
    return out


def sample_interval(num_records: int, sample_every: int) -> int:
    """Every how many records one is timed: as asked, or about TARGET_SAMPLES per run."""
    if sample_every > 0:
        return sample_every
    return max(1, num_records // TARGET_SAMPLES)


@dataclass
class LatencySampler:
    """Send-to-ack latencies (ms) of sampled records, in completion order, and their errors.

    ``on_done`` runs in the producer's sender task when the record's batch completes.
    """

    values_ms: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: BaseException | None = None

    def track(self, future: RecordFuture, sent_at: float) -> None:
        future.add_done_callback(functools.partial(self._done, sent_at))

    def _done(self, sent_at: float, future: RecordFuture) -> None:
        error = future.exception()
        if error is None:
            self.values_ms.append((time.perf_counter() - sent_at) * 1000)
            return
        self.errors += 1
        if self.first_error is None:
            self.first_error = error


# -- produce ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProducePerfSpec:
    """What one producer run sends, and how the producer is tuned."""

    topic: str
    num_records: int
    record_size: int = 100
    acks: str = "1"
    batch_bytes: int = DEFAULT_BATCH_BYTES
    linger_ms: int = 5
    compression: str = "none"
    throughput: float = -1  # records/s cap; <= 0 means none
    sample_every: int = 0  # 0: automatic


@dataclass
class _Window:
    """Progress since the last report: where it started (time, records, samples)."""

    started: float
    records: int = 0
    samples: int = 0


def _progress_line(
    window: _Window, now: float, sent: int, record_size: int, sampler: LatencySampler
) -> str:
    seconds = max(now - window.started, 1e-9)
    count = sent - window.records
    recent = sampler.values_ms[window.samples :]
    rate = (
        f"{count} records sent, {count / seconds:,.1f} records/s "
        f"({count * record_size / seconds / 1e6:.2f} MB/s), "
    )
    if not recent:
        return rate + "no sampled record acknowledged in this interval"
    avg = math.fsum(recent) / len(recent)
    return rate + f"{avg:.1f} ms avg latency, {max(recent):.1f} ms max latency"


async def produce_perf(
    bootstrap: str,
    spec: ProducePerfSpec,
    progress: TextIO | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run one producer flat out (or capped) and return the figures as a flat-ish dict.

    Raises the first error seen on a sampled record (the run is then no measurement).
    """
    every = sample_interval(spec.num_records, spec.sample_every)
    sampler = LatencySampler()
    async with (
        Admin(bootstrap, **(options or {})) as admin,
        Producer(
            bootstrap,
            **(options or {}),
            acks=spec.acks,
            batch_bytes=spec.batch_bytes,
            linger_ms=spec.linger_ms,
            compression=spec.compression,
        ) as producer,
    ):
        await producer.partitions_for(spec.topic)  # metadata before the clock starts
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_stop_if_topic_deleted, admin, spec.topic, sampler)
            elapsed = await _send_all(producer, spec, sampler, progress)
            nursery.cancel_scope.cancel()
    if sampler.first_error is not None:
        raise sampler.first_error
    return {
        "test": "produce",
        **asdict(spec),
        "sample_every": every,
        "elapsed_s": round(elapsed, 3),
        "records_per_s": round(spec.num_records / elapsed, 1),
        "mb_per_s": round(spec.num_records * spec.record_size / elapsed / 1e6, 2),
        "latency_ms": latency_summary(sampler.values_ms),
    }


async def _send_all(
    producer: Producer, spec: ProducePerfSpec, sampler: LatencySampler, progress: TextIO | None
) -> float:
    """Send the run's records (flat out or capped) and flush; returns the elapsed seconds."""
    payload = os.urandom(spec.record_size)  # incompressible, like kafka-producer-perf-test
    every = sample_interval(spec.num_records, spec.sample_every)
    rate = spec.throughput if spec.throughput > 0 else 0.0
    check_every = 1 if rate else CLOCK_EVERY  # a cap is kept record by record
    clock = time.perf_counter
    send = producer.send
    topic = spec.topic
    last = spec.num_records - 1
    started = clock()
    window = _Window(started)
    for i in range(spec.num_records):
        if i % every and i != last:
            await send(topic, payload)
        else:
            sent_at = clock()
            sampler.track(await send(topic, payload), sent_at)
        if i % check_every:
            continue
        if sampler.first_error is not None:
            raise sampler.first_error  # stop at once: the rest would fail the same way
        now = clock()
        if rate:
            ahead = started + (i + 1) / rate - now
            if ahead > 0:
                await trio.sleep(ahead)
        if now - window.started >= PROGRESS_INTERVAL_S:
            if progress is not None:
                line = _progress_line(window, now, i + 1, spec.record_size, sampler)
                print(line, file=progress)
            window = _Window(now, i + 1, len(sampler.values_ms))
    await producer.flush()
    return clock() - started


async def _stop_if_topic_deleted(admin: Admin, topic: str, sampler: LatencySampler) -> None:
    """Raise once the topic is gone. The producer retries UNKNOWN_TOPIC_OR_PARTITION (a new
    topic's metadata may be on its way) until the delivery timeout, which would leave the run
    printing progress without acknowledgements for minutes; an interval without any
    acknowledgement makes this ask the metadata instead."""
    seen = False  # once the admin client has seen the topic, "unknown" means deleted
    acked = -1  # look at once: a deletion soon after the start must find the topic seen
    while True:
        now_acked = len(sampler.values_ms)
        if not seen or now_acked == acked:
            exists = await topic_exists(admin, topic)
            if exists is False and seen:
                raise deleted_error(topic)
            seen = seen or exists is True
        acked = now_acked
        await trio.sleep(PROGRESS_INTERVAL_S / 2)


def format_produce(result: dict[str, Any]) -> str:
    """kafka-producer-perf-test's summary line."""
    lat = result["latency_ms"]

    def ms(key: str) -> str:
        value = lat[key]
        return "n/a" if value is None else f"{value:.2f} ms"

    return (
        f"{result['num_records']} records sent, {result['records_per_s']:,.1f} records/s "
        f"({result['mb_per_s']:.2f} MB/s), {ms('avg')} avg latency, {ms('max')} max latency, "
        f"{ms('p50')} 50th, {ms('p95')} 95th, {ms('p99')} 99th, {ms('p99_9')} 99.9th "
        f"({lat['samples']} samples)"
    )


def run_produce(args: argparse.Namespace) -> int:
    spec = ProducePerfSpec(
        topic=args.topic,
        num_records=args.num_records,
        record_size=args.record_size,
        acks=args.acks,
        batch_bytes=args.batch_bytes,
        linger_ms=args.linger_ms,
        compression=args.compression,
        throughput=args.throughput,
        sample_every=args.sample_every,
    )

    async def main() -> int:
        result = await produce_perf(args.bootstrap, spec, sys.stderr, client_options(args))
        print(json.dumps(result) if args.json else format_produce(result))
        return 0

    return run_async(main)


# -- consume ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConsumePerfSpec:
    """What one consumer run reads (every partition of ``topic``, from the beginning)."""

    topic: str
    num_records: int
    timeout_ms: int = 10_000
    fetch_max_wait_ms: int = 500
    max_partition_fetch_bytes: int = 1 << 20
    max_poll_records: int = 500


async def consume_perf(
    bootstrap: str,
    spec: ConsumePerfSpec,
    progress: TextIO | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Read ``num_records`` from the beginning of every partition; figures as a dict.

    Stops early (``"complete": false``) after ``timeout_ms`` without a record.
    """
    async with Admin(bootstrap, **(options or {})) as admin:
        (description,) = await admin.describe_topics([spec.topic])
    tps = [TopicPartition(spec.topic, p.partition) for p in description.partitions]
    count = 0
    value_bytes = 0
    clock = time.perf_counter
    idle_s = spec.timeout_ms / 1000
    async with Consumer(
        bootstrap,
        **(options or {}),
        fetch_max_wait_ms=spec.fetch_max_wait_ms,
        max_partition_fetch_bytes=spec.max_partition_fetch_bytes,
        max_poll_records=spec.max_poll_records,
    ) as consumer:
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        started = clock()
        last_record = started
        window = _Window(started)
        while count < spec.num_records:  # ends at num_records or after idle_s without a record
            wait_s = last_record + idle_s - clock()
            if wait_s <= 0:
                break
            records = await consumer.poll(
                timeout_ms=min(POLL_MS, math.ceil(wait_s * 1000)),
                max_records=min(spec.num_records - count, spec.max_poll_records),
            )
            if not records:
                continue
            last_record = clock()
            count += len(records)
            value_bytes += sum([len(r.value) for r in records if r.value is not None])
            if progress is not None and last_record - window.started >= PROGRESS_INTERVAL_S:
                seconds = last_record - window.started
                done = count - window.records
                print(f"{done} records read, {done / seconds:,.1f} records/s", file=progress)
                window = _Window(last_record, count)
    elapsed = max(last_record - started, 1e-9)
    return {
        "test": "consume",
        **asdict(spec),
        "records": count,
        "complete": count >= spec.num_records,
        "value_bytes": value_bytes,
        "elapsed_s": round(elapsed, 3),
        "records_per_s": round(count / elapsed, 1),
        "mb_per_s": round(value_bytes / elapsed / 1e6, 2),
    }


def format_consume(result: dict[str, Any]) -> str:
    return (
        f"{result['records']} records read in {result['elapsed_s']:.2f} s, "
        f"{result['records_per_s']:,.1f} records/s ({result['mb_per_s']:.2f} MB/s)"
    )


def run_consume(args: argparse.Namespace) -> int:
    spec = ConsumePerfSpec(
        topic=args.topic,
        num_records=args.num_records,
        timeout_ms=args.timeout_ms,
        fetch_max_wait_ms=args.fetch_max_wait_ms,
        max_partition_fetch_bytes=args.max_partition_fetch_bytes,
    )

    async def main() -> int:
        result = await consume_perf(args.bootstrap, spec, sys.stderr, client_options(args))
        print(json.dumps(result) if args.json else format_consume(result))
        if not result["complete"]:
            print(
                f"warning: stopped after {args.timeout_ms} ms without a record, "
                f"{result['records']} of {args.num_records} read",
                file=sys.stderr,
            )
            return 1
        return 0

    return run_async(main)
