"""End-to-end latency through a Kafka cluster with librdkafka (confluent-kafka), the same
settings against rillet and against Apache Kafka.

A producer sends 100 B records at a fixed rate (acks=all, idempotence on, linger 1 ms),
each carrying its send time; a consumer in the same process, assigned every partition at
its end before the first send, notes when each arrives. Records of the first second
(connections, metadata, JIT) are left out. Returns p50/p99/p99.9/max in milliseconds.
"""

from __future__ import annotations

import struct
import threading
import time
from typing import Any

WARMUP_S = 1.0
DRAIN_S = 10.0
_STAMP = struct.Struct(">d")


def measure(
    bootstrap: str,
    topic: str,
    partitions: int,
    rate: int,
    seconds: float,
    conf: dict[str, str] | None = None,
) -> Any:
    """``conf``: more librdkafka settings for both clients (TLS, for instance)."""
    from confluent_kafka import OFFSET_END, Consumer, Producer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-latency",
            "enable.auto.commit": False,
            **(conf or {}),
        }
    )
    consumer.assign([TopicPartition(topic, p, OFFSET_END) for p in range(partitions)])
    consumer.consume(1, 1.0)  # the assignment takes effect (positions at the end)
    total = int(rate * seconds)
    latencies_s: list[float] = []
    done = threading.Event()

    def consume() -> None:
        deadline = None
        while len(latencies_s) < total:
            # One record per call: consume(n, timeout) would hold records back until it
            # has n of them or the timeout passes.
            message = consumer.poll(0.05)
            if message is not None and message.error() is None:
                now = time.perf_counter()
                latencies_s.append(now - _STAMP.unpack_from(message.value())[0])
            if done.is_set():
                deadline = deadline or time.monotonic() + DRAIN_S
                if time.monotonic() > deadline:
                    break

    reader = threading.Thread(target=consume)
    reader.start()
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 1,
            **(conf or {}),
        }
    )
    padding = b"x" * (100 - _STAMP.size)
    started = time.perf_counter()
    for i in range(total):
        due = started + i / rate
        while (now := time.perf_counter()) < due:
            time.sleep(min(due - now, 0.001))
        producer.produce(
            topic, _STAMP.pack(time.perf_counter()) + padding, partition=i % partitions
        )
        producer.poll(0)
    producer.flush(30)
    done.set()
    reader.join()
    consumer.close()
    skip = int(rate * WARMUP_S)
    kept = sorted(latencies_s[skip:])
    if not kept:
        return {"received": len(latencies_s), "sent": total}

    def pct(q: float) -> float:
        return round(kept[min(len(kept) - 1, int(q * len(kept)))] * 1000, 3)

    return {
        "sent": total,
        "received": len(latencies_s),
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "p999_ms": pct(0.999),
        "max_ms": round(kept[-1] * 1000, 3),
    }
