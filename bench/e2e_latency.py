"""End-to-end latency at a fixed rate, producer and consumer in separate processes.

Three kinds of process take part, as in a real deployment: the node(s) (started by this
script unless ``--bootstrap`` is given; ``--nodes 3 --replication-factor 3 --acks all`` for
a replicated cluster), a consumer process (this script again, ``--role consumer``) and the
producer (this process). The consumer assigns itself the partition at its end and says
"ready" on stdout; the producer then sends ``--rate`` records/s for ``--seconds`` in small
bursts (every ``--tick-ms``, rate x tick records), paced by trio's clock. Each value starts
with its send time from the monotonic clock, which all processes of a machine share, so the
consumer records receive time minus send time per record.

Besides the end-to-end figures (p50, p99, p99.9, max in ms) the line has the breakdown that
finds where the time goes: the producer's send -> acknowledged latency per record (acks=1:
the leader appended; acks=all: the high watermark passed it), and the consumer's fetch
counts (polls that returned records, records per such poll: how many wake-ups a record
costs), and the producer's and consumer's CPU time per record. A low rate with one record
per tick (``--rate 200 --tick-ms 5``) traces lone records through an idle path; 10k/s in
1 ms ticks is the goal's workload.
One warm-up record goes first so connection set-up is not measured.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import time
from typing import Any

import trio
from _common import emit, ensure_topic, own_cpu_s, parser, target

from rillet.cli.perf_command import latency_summary
from rillet.client import Consumer, Producer, TopicPartition
from rillet.client.accumulator import RecordFuture

STAMP = struct.Struct(">q")
WARMUP_STAMP = -1
WARMUP_TIMEOUT_S = 30.0
DRAIN_TIMEOUT_S = 30.0  # after the last send, how long to wait for stragglers
READY_TIMEOUT_S = 60.0
POLL_MS = 100
clock = time.monotonic_ns  # CLOCK_MONOTONIC: one clock for every process of the machine


def schedule(rate: float, seconds: float, tick_ms: float) -> tuple[int, int, float]:
    """(ticks, records per tick, tick in s) that give exactly ``rate`` with whole bursts."""
    burst = max(1, round(rate * tick_ms / 1000))
    tick_s = burst / rate
    return max(1, round(seconds / tick_s)), burst, tick_s


async def paced_send(
    producer: Producer, topic: str, ticks: int, burst: int, tick_s: float, pad: bytes
) -> list[float]:
    """Send ``burst`` records per tick for ``ticks`` ticks; returns send -> ack in ms.

    A late tick is not skipped: the next bursts follow at once until the schedule is met.
    """
    acked_ms: list[float] = []
    start = trio.current_time()
    pack = STAMP.pack

    def acked(sent_ns: int) -> Any:
        return lambda future: acked_ms.append((clock() - sent_ns) / 1e6)

    for k in range(ticks):
        for _ in range(burst):
            sent = clock()
            future: RecordFuture = await producer.send(topic, pack(sent) + pad)
            future.add_done_callback(acked(sent))
        await trio.sleep_until(start + (k + 1) * tick_s)
    await producer.flush()
    return acked_ms


async def consume(bootstrap: str, topic: str, expected: int, wait_ms: int, max_s: float) -> None:
    """The consumer process: ready line, then one JSON line with its figures."""
    tp = TopicPartition(topic, 0)
    latencies: list[float] = []
    polls = fetched_polls = 0
    async with Consumer(bootstrap, fetch_max_wait_ms=wait_ms) as consumer:
        consumer.assign([tp])
        await consumer.seek_to_end(tp)
        await consumer.position(tp)
        print("ready", flush=True)
        cpu_start = own_cpu_s()
        unpack = STAMP.unpack_from
        deadline = trio.current_time() + max_s
        while len(latencies) < expected and trio.current_time() < deadline:
            records = await consumer.poll(timeout_ms=POLL_MS)
            now = clock()
            polls += 1
            if records:
                fetched_polls += 1
            for r in records:
                sent = unpack(r.value or b"")[0]
                if sent != WARMUP_STAMP:
                    latencies.append((now - sent) / 1e6)
    print(
        json.dumps(
            {
                "received": len(latencies),
                "latency_ms": latency_summary(latencies),
                "polls": polls,
                "polls_with_records": fetched_polls,
                "records_per_wakeup": round(len(latencies) / max(fetched_polls, 1), 2),
                "consumer_cpu_us_per_record": round(
                    (own_cpu_s() - cpu_start) * 1e6 / max(len(latencies), 1), 1
                ),
            }
        ),
        flush=True,
    )


async def produce(
    bootstrap: str,
    topic: str,
    args: Any,
    ticks: int,
    burst: int,
    tick_s: float,
    cpu_used: list[float],
) -> list[float]:
    pad = b"x" * max(args.record_size - STAMP.size, 0)
    async with Producer(bootstrap, acks=args.acks, linger_ms=args.linger_ms) as producer:
        await (await producer.send(topic, STAMP.pack(WARMUP_STAMP)))  # the consumer skips it
        cpu_start = own_cpu_s()
        acked = await paced_send(producer, topic, ticks, burst, tick_s, pad)
        cpu_used[0] = own_cpu_s() - cpu_start
        return acked


def start_consumer(bootstrap: str, topic: str, args: Any, expected: int) -> subprocess.Popen[str]:
    argv = [
        sys.executable,
        __file__,
        "--role=consumer",
        f"--bootstrap={bootstrap}",
        f"--topic={topic}",
        f"--expected={expected}",
        f"--fetch-max-wait-ms={args.fetch_max_wait_ms}",
        f"--seconds={args.seconds}",
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # bounded: the consumer exits after its own deadlines
    if line.strip() != "ready":
        proc.kill()
        proc.wait()
        raise SystemExit(f"the consumer process did not start (said {line!r})")
    return proc


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--rate", type=float, default=10_000, help="records/s (default 10000)")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--tick-ms", type=float, default=1.0, help="send a burst this often")
    p.add_argument("--record-size", type=int, default=100)
    p.add_argument("--acks", default="1", choices=["all", "-1", "0", "1"])
    p.add_argument("--linger-ms", type=float, default=0.0, help="the producer's linger_ms")
    p.add_argument("--fetch-max-wait-ms", type=int, default=500)
    p.add_argument("--topic", help="default: a new topic per run")
    p.add_argument("--role", choices=["all", "consumer"], default="all", help=argparse.SUPPRESS)
    p.add_argument("--expected", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args()
    ticks, burst, tick_s = schedule(args.rate, args.seconds, args.tick_ms)
    if args.role == "consumer":
        trio.run(
            consume,
            args.bootstrap,
            args.topic,
            args.expected,
            args.fetch_max_wait_ms,
            args.seconds + DRAIN_TIMEOUT_S + WARMUP_TIMEOUT_S,
        )
        return
    topic = args.topic or f"bench-e2e-{time.time_ns()}"
    with target(args.bootstrap, args.nodes) as bootstrap:
        trio.run(ensure_topic, bootstrap, topic, 1, args.replication_factor)
        consumer = start_consumer(bootstrap, topic, args, ticks * burst)
        try:
            cpu_used = [0.0]
            acked_ms = trio.run(produce, bootstrap, topic, args, ticks, burst, tick_s, cpu_used)
            out, _ = consumer.communicate(timeout=DRAIN_TIMEOUT_S + WARMUP_TIMEOUT_S)
        finally:
            if consumer.poll() is None:
                consumer.kill()
                consumer.wait()
        seen = json.loads(out.strip().splitlines()[-1])
        emit(
            "e2e_latency",
            {**vars(args), "topic": topic, "bootstrap": bootstrap},
            {
                "sent": ticks * burst,
                **seen,
                "ack_latency_ms": latency_summary(acked_ms),
                "producer_cpu_us_per_record": round(cpu_used[0] * 1e6 / max(ticks * burst, 1), 1),
                "loadavg_1m_after": round(os.getloadavg()[0], 2),
            },
        )


if __name__ == "__main__":
    main()
