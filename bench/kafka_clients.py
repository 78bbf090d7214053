"""Kafka clients through the Kafka listener beside rillet's own client, on one cluster.

Each client produces N x B-byte records (default 1,000,000 x 100 B) to a topic of its own
(acks=all, idempotence on for the Kafka clients) and then reads them all back with
``assign`` from offset 0; prints records/s for each step as one JSON line. Without
``--bootstrap`` it starts a local cluster (``--nodes``, default 3; topics get replication
factor ``--replication-factor``, default 3) and stops it at the end. With ``--bootstrap``,
``--kafka-bootstrap`` names the Kafka listeners of the same cluster.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import trio
from _common import emit, ensure_topic, parser

from rillet.broker.cli.perf_command import (
    ConsumePerfSpec,
    ProducePerfSpec,
    consume_perf,
    produce_perf,
)
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

CLIENTS = ("confluent-kafka", "kafka-python", "rillet")
TIMEOUT_S = 120


@contextlib.contextmanager
def cluster_of(args: Any) -> Iterator[tuple[str, str]]:
    """(native bootstrap, Kafka bootstrap) of the given cluster or of one started here."""
    if args.bootstrap:
        if not args.kafka_bootstrap:
            sys.exit("--bootstrap needs --kafka-bootstrap (the same cluster's Kafka listeners)")
        yield args.bootstrap, args.kafka_bootstrap
        return
    with tempfile.TemporaryDirectory(prefix="rillet-bench-") as tmp:
        plan = plan_cluster(Path(tmp), args.nodes)
        with LocalCluster(plan, log_level="WARNING") as cluster:
            cluster.start()
            print(f"started a local {args.nodes}-node cluster", file=sys.stderr)
            yield plan.bootstrap, plan.kafka_bootstrap


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


def confluent_consume(bootstrap: str, topic: str, n: int, partitions: int) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False}
    )
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        seen, deadline = 0, time.monotonic() + TIMEOUT_S
        while seen < n and time.monotonic() < deadline:
            seen += sum(1 for m in consumer.consume(10_000, 0.5) if m.error() is None)
    finally:
        consumer.close()
    if seen < n:
        raise RuntimeError(f"confluent-kafka read {seen} of {n} records")


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
    """Records per second of ``step(*args)``, which handles ``n`` records."""
    started = time.perf_counter()
    step(*args)
    return round(n / (time.perf_counter() - started))


def main() -> None:
    p = parser(__doc__ or "")
    p.set_defaults(nodes=3, replication_factor=3)
    p.add_argument("--kafka-bootstrap", help="with --bootstrap: the cluster's Kafka listeners")
    p.add_argument("--num-records", type=int, default=1_000_000)
    p.add_argument("--record-size", type=int, default=100)
    p.add_argument("--partitions", type=int, default=3)
    p.add_argument("--clients", default=",".join(CLIENTS), help="comma-separated subset")
    args = p.parse_args()
    n, value = args.num_records, b"x" * args.record_size
    results: dict[str, Any] = {}
    with cluster_of(args) as (native, kafka):
        for client in args.clients.split(","):
            topic = f"bench-kafka-{client}-{time.time_ns()}"
            trio.run(ensure_topic, native, topic, args.partitions, args.replication_factor)
            print(f"{client}: producing {n} records", file=sys.stderr)
            if client == "confluent-kafka":
                produced = timed(confluent_produce, n, kafka, topic, n, value)
                consumed = timed(confluent_consume, n, kafka, topic, n, args.partitions)
            elif client == "kafka-python":
                produced = timed(kafka_python_produce, n, kafka, topic, n, value)
                consumed = timed(kafka_python_consume, n, kafka, topic, n, args.partitions)
            elif client == "rillet":
                spec = ProducePerfSpec(topic, n, args.record_size, acks="all")
                produced = round(trio.run(produce_perf, native, spec)["records_per_s"])
                read = ConsumePerfSpec(topic, n)
                consumed = round(trio.run(consume_perf, native, read)["records_per_s"])
            else:
                sys.exit(f"unknown client {client!r} (choose from {', '.join(CLIENTS)})")
            results[client] = {"produce_records_per_s": produced, "consume_records_per_s": consumed}
    emit("kafka_clients", {**vars(args), "bootstrap": native, "kafka": kafka}, results)


if __name__ == "__main__":
    main()
