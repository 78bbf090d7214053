"""End-to-end latency at a fixed rate: send -> acknowledged -> committed -> fetched.

A producer (linger_ms=0) sends ``--rate`` records/s for ``--seconds`` in small bursts (every
``--tick-ms``, rate x tick records), paced by trio's clock; each value starts with its send
time (time.perf_counter_ns). A consumer in the same process long-polls with a small
fetch_max_wait_ms and records receive time minus send time. Prints p50, p99, p99.9 and max
in ms as one JSON line. One warm-up record goes first so connection set-up is not measured.
"""

from __future__ import annotations

import math
import struct
import time
from dataclasses import dataclass, field

import trio
from _common import emit, ensure_topic, parser, target

from rillet.broker.cli.perf_command import latency_summary
from rillet.client import Consumer, Producer, TopicPartition

STAMP = struct.Struct(">q")
WARMUP_STAMP = -1
WARMUP_TIMEOUT_S = 30.0
DRAIN_TIMEOUT_S = 30.0  # after the last send, how long to wait for stragglers
POLL_MS = 100


async def paced_send(
    producer: Producer, topic: str, rate: float, seconds: float, tick_s: float, pad: bytes
) -> int:
    """Send ``rate`` records/s for ``seconds``, one burst per tick; returns the count sent.

    A late tick is not skipped: the next bursts follow at once until the schedule is met.
    """
    burst = max(1, round(rate * tick_s))
    tick_s = burst / rate  # the tick that gives exactly ``rate`` with whole bursts
    ticks = max(1, round(seconds / tick_s))
    start = trio.current_time()
    clock = time.perf_counter_ns
    pack = STAMP.pack
    for k in range(ticks):
        for _ in range(burst):
            await producer.send(topic, pack(clock()) + pad)
        await trio.sleep_until(start + (k + 1) * tick_s)
    return ticks * burst


@dataclass
class Reception:
    """What the consumer task has seen, and when it may stop.

    The producer sets ``expected`` (records sent) and ``deadline`` (how long stragglers may
    take) when it is done; until then the consumer keeps receiving.
    """

    latencies_ms: list[float] = field(default_factory=list)
    expected: int | None = None
    deadline: float = math.inf

    def finished(self) -> bool:
        return self.expected is not None and len(self.latencies_ms) >= self.expected


async def receive(consumer: Consumer, seen: Reception) -> None:
    """Record receive time minus send time per record, until ``seen`` says stop."""
    unpack = STAMP.unpack_from
    clock = time.perf_counter_ns
    latencies = seen.latencies_ms
    while not seen.finished() and trio.current_time() < seen.deadline:
        records = await consumer.poll(timeout_ms=POLL_MS)
        now = clock()
        for r in records:
            sent = unpack(r.value or b"")[0]
            if sent != WARMUP_STAMP:
                latencies.append((now - sent) / 1e6)


async def warm_up(producer: Producer, consumer: Consumer, topic: str) -> None:
    """One record through the whole path, so connections and metadata are in place."""
    await (await producer.send(topic, STAMP.pack(WARMUP_STAMP)))
    with trio.fail_after(WARMUP_TIMEOUT_S):
        while not await consumer.poll(timeout_ms=POLL_MS):  # bounded by fail_after
            pass


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--rate", type=float, default=10_000, help="records/s (default 10000)")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--tick-ms", type=float, default=1.0, help="send a burst this often")
    p.add_argument("--record-size", type=int, default=100)
    p.add_argument("--acks", default="1", choices=["all", "-1", "0", "1"])
    p.add_argument("--fetch-max-wait-ms", type=int, default=100)
    p.add_argument("--topic", help="default: a new topic per run")
    args = p.parse_args()
    topic = args.topic or f"bench-e2e-{time.time_ns()}"
    pad = b"x" * max(args.record_size - STAMP.size, 0)
    tp = TopicPartition(topic, 0)

    async def run(bootstrap: str) -> None:
        await ensure_topic(bootstrap, topic, 1, args.replication_factor)
        seen = Reception()
        async with (
            Consumer(bootstrap, fetch_max_wait_ms=args.fetch_max_wait_ms) as consumer,
            Producer(bootstrap, acks=args.acks, linger_ms=0) as producer,
        ):
            consumer.assign([tp])
            await consumer.seek_to_end(tp)
            await consumer.position(tp)
            await warm_up(producer, consumer, topic)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(receive, consumer, seen)
                sent = await paced_send(
                    producer, topic, args.rate, args.seconds, args.tick_ms / 1000, pad
                )
                await producer.flush()
                seen.expected = sent
                seen.deadline = trio.current_time() + DRAIN_TIMEOUT_S
        emit(
            "e2e_latency",
            {**vars(args), "topic": topic, "bootstrap": bootstrap},
            {
                "sent": sent,
                "received": len(seen.latencies_ms),
                "latency_ms": latency_summary(seen.latencies_ms),
            },
        )

    with target(args.bootstrap, args.nodes) as bootstrap:
        trio.run(run, bootstrap)


if __name__ == "__main__":
    main()
