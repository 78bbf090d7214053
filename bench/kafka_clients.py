"""Kafka clients against rillet and against Apache Kafka, on the same machine, in one run.

For each target (``--targets``, default ``rillet-1,kafka-1,rillet-3,kafka-3``: rillet and a
real Kafka 4.x cluster of 1 and of 3 nodes, started here one after the other and stopped),
each client produces N x B-byte records (default 1,000,000 x 100 B) to a topic of its own
(replication factor = the target's node count, acks=all, idempotence on) and then reads
them all back with ``assign`` from offset 0; rillet's own client runs on rillet targets
too. Then librdkafka's end-to-end latency at ``--latency-rate`` records/s. Prints one JSON
line: records/s per target and client, latency percentiles per target.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import trio
from _common import emit, parser
from _kafka_latency import measure
from _kafka_targets import Target, started

from rillet.cli.perf_command import (
    ConsumePerfSpec,
    ProducePerfSpec,
    consume_perf,
    produce_perf,
)

CLIENTS = ("confluent-kafka", "kafka-python", "rillet")
TARGETS = "rillet-1,kafka-1,rillet-3,kafka-3"
TIMEOUT_S = 600


def confluent_produce(bootstrap: str, topic: str, n: int, value: bytes) -> None:
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 5,
            "batch.size": 256 * 1024,
        }
    )
    for _ in range(n):
        while True:
            try:
                producer.produce(topic, value)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    if producer.flush(TIMEOUT_S) != 0:
        raise RuntimeError("confluent-kafka: records left unacknowledged")


def confluent_consume(bootstrap: str, topic: str, n: int, partitions: int) -> float:
    """Seconds to read the ``n`` records, timed once the group coordinator answers:
    librdkafka (2.16) hands records to the application faster while its group has no
    coordinator yet, which made a broker whose first FindCoordinator is slow (Kafka
    creating its offsets topic) look faster."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False}
    )
    try:
        _wait_for_coordinator(consumer, TopicPartition(topic, 0))
        started = time.perf_counter()
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        seen, deadline = 0, time.monotonic() + TIMEOUT_S
        while seen < n and time.monotonic() < deadline:
            seen += sum(1 for m in consumer.consume(10_000, 0.5) if m.error() is None)
        elapsed_s = time.perf_counter() - started
    finally:
        consumer.close()
    if seen < n:
        raise RuntimeError(f"confluent-kafka read {seen} of {n} records")
    return elapsed_s


def _wait_for_coordinator(consumer: Any, tp: Any) -> None:
    """Until an OffsetFetch is answered (a new Kafka cluster answers NOT_COORDINATOR while
    it creates its offsets topic)."""
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + TIMEOUT_S
    while True:
        try:
            consumer.committed([tp], timeout=10)
            return
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def kafka_python_produce(bootstrap: str, topic: str, n: int, value: bytes) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        enable_idempotence=True,
        linger_ms=5,
        batch_size=256 * 1024,
    )
    try:
        for _ in range(n):
            producer.send(topic, value)
        producer.flush(TIMEOUT_S)
    finally:
        producer.close()


def kafka_python_consume(bootstrap: str, topic: str, n: int, partitions: int) -> None:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        seen, deadline = 0, time.monotonic() + TIMEOUT_S
        while seen < n and time.monotonic() < deadline:
            seen += sum(len(rs) for rs in consumer.poll(timeout_ms=500).values())
    finally:
        consumer.close()
    if seen < n:
        raise RuntimeError(f"kafka-python read {seen} of {n} records")


def timed(step: Callable[..., object], n: int, *args: Any) -> float:
    """Records per second of ``step(*args)``, which handles ``n`` records (a step that
    returns a number of seconds says itself how long the records took)."""
    started = time.perf_counter()
    own = step(*args)
    elapsed_s = own if isinstance(own, float) else time.perf_counter() - started
    return round(n / elapsed_s)


def run_client(target: Target, client: str, args: Any) -> dict[str, int] | None:
    n, value = args.num_records, b"x" * args.record_size
    topic = f"bench-kafka-{client}-{time.time_ns()}"
    kafka = target.kafka_bootstrap
    if client == "rillet":
        if target.native_bootstrap is None:
            return None  # rillet's own client speaks only rillet's protocol
        target.create_topic(topic, args.partitions)
        spec = ProducePerfSpec(topic, n, args.record_size, acks="all")
        produced = round(trio.run(produce_perf, target.native_bootstrap, spec)["records_per_s"])
        read = ConsumePerfSpec(topic, n)
        consumed = round(trio.run(consume_perf, target.native_bootstrap, read)["records_per_s"])
    elif client == "confluent-kafka":
        target.create_topic(topic, args.partitions)
        produced = timed(confluent_produce, n, kafka, topic, n, value)
        consumed = timed(confluent_consume, n, kafka, topic, n, args.partitions)
    elif client == "kafka-python":
        target.create_topic(topic, args.partitions)
        produced = timed(kafka_python_produce, n, kafka, topic, n, value)
        consumed = timed(kafka_python_consume, n, kafka, topic, n, args.partitions)
    else:
        sys.exit(f"unknown client {client!r} (choose from {', '.join(CLIENTS)})")
    return {"produce_records_per_s": produced, "consume_records_per_s": consumed}


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--targets", default=TARGETS, help="comma-separated rillet-N / kafka-N")
    p.add_argument(
        "--kafka-bootstrap", help="with --bootstrap: that cluster's Kafka listeners (no targets)"
    )
    p.add_argument("--num-records", type=int, default=1_000_000)
    p.add_argument("--record-size", type=int, default=100)
    p.add_argument("--partitions", type=int, default=3)
    p.add_argument("--clients", default=",".join(CLIENTS), help="comma-separated subset")
    p.add_argument("--latency-rate", type=int, default=10_000, help="records/s; 0: skip")
    p.add_argument("--latency-seconds", type=float, default=20.0)
    args = p.parse_args()
    if args.bootstrap and not args.kafka_bootstrap:
        sys.exit("--bootstrap needs --kafka-bootstrap (the same cluster's Kafka listeners)")
    results: dict[str, Any] = {}
    names = ["given"] if args.bootstrap else args.targets.split(",")
    for name in names:
        with started(name, args) as target:
            result: dict[str, Any] = {}
            for client in args.clients.split(","):
                print(f"{name}: {client}: {args.num_records} records", file=sys.stderr)
                figures = run_client(target, client, args)
                if figures is not None:
                    result[client] = figures
            if args.latency_rate > 0:
                print(f"{name}: latency at {args.latency_rate}/s", file=sys.stderr)
                topic = f"bench-latency-{time.time_ns()}"
                target.create_topic(topic, args.partitions)
                result["e2e_latency"] = measure(
                    target.kafka_bootstrap,
                    topic,
                    args.partitions,
                    args.latency_rate,
                    args.latency_seconds,
                )
            results[name] = result
            print(f"{name}: {result}", file=sys.stderr)
    emit("kafka_clients", vars(args), results)


if __name__ == "__main__":
    main()
