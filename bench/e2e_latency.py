"""End-to-end latency at a fixed rate: produce -> committed -> fetched by a consumer.

The producer sends ``--rate`` records/s (in 1 ms ticks) with linger_ms=0 and acks=1; each
value carries its send time (perf_counter_ns, same process), and the consumer, long-polling
in the same process, records receive time minus send time. One JSON line.
"""

from __future__ import annotations

import struct
import time

import trio
from _common import emit, parser, target

from rillet.client import Admin, Consumer, NewTopic, Producer, TopicPartition

STAMP = struct.Struct(">q")


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--rate", type=int, default=10_000)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--record-size", type=int, default=100)
    p.add_argument("--acks", default="1")
    args = p.parse_args()
    topic = f"bench-e2e-{time.time_ns()}"
    total = int(args.rate * args.seconds)
    pad = b"x" * max(args.record_size - STAMP.size, 0)

    async def run(bootstrap: str) -> None:
        async with Admin(bootstrap) as admin:
            await admin.create_topics([NewTopic(topic, 1)])
        latencies: list[float] = []
        tp = TopicPartition(topic, 0)

        async def consume(consumer: Consumer) -> None:
            while len(latencies) < total:
                for r in await consumer.poll(timeout_ms=1000):
                    sent = STAMP.unpack_from(r.value or b"")[0]
                    latencies.append((time.perf_counter_ns() - sent) / 1e6)

        async with (
            Consumer(bootstrap, fetch_max_wait_ms=100) as consumer,
            Producer(bootstrap, acks=args.acks, linger_ms=0) as producer,
        ):
            consumer.assign([tp])
            await consumer.seek_to_end(tp)
            await consumer.position(tp)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(consume, consumer)
                per_tick = max(args.rate // 1000, 1)
                start = trio.current_time()
                sent = 0
                with trio.fail_after(args.seconds * 3 + 30):
                    while sent < total:
                        for _ in range(min(per_tick, total - sent)):
                            await producer.send(topic, STAMP.pack(time.perf_counter_ns()) + pad)
                            sent += 1
                        await trio.sleep_until(start + sent / args.rate)
                    await producer.flush()
        latencies.sort()

        def pct(q: float) -> float:
            return round(latencies[min(int(q * len(latencies)), len(latencies) - 1)], 3)

        emit(
            {
                "bench": "e2e_latency",
                "rate": args.rate,
                "records": len(latencies),
                "acks": args.acks,
                "record_size": args.record_size,
                "latency_ms": {
                    "p50": pct(0.5),
                    "p99": pct(0.99),
                    "p99_9": pct(0.999),
                    "max": round(latencies[-1], 3),
                },
            }
        )

    with target(args.bootstrap) as bootstrap:
        trio.run(run, bootstrap)


if __name__ == "__main__":
    main()
