"""A transactional producer committing every 100 ms against an idempotent one, on rillet
and on Apache Kafka, on the same machine, in one run.

For each target (``--targets``, default ``rillet-3,kafka-3``: a 3-node rillet cluster and a
3-node Kafka 4.x cluster, started here one after the other and stopped), confluent-kafka
writes ``--record-size``-byte records to a topic of its own (replication factor 3, acks=all)
for ``--seconds``: first an idempotent producer, then a transactional one that begins a
transaction, writes for ``--commit-interval-ms`` and commits, again and again. Records/s
counts what was acknowledged (idempotent) or committed (transactional). Prints one JSON
line: both rates per target and their ratio (the goal on rillet is at least 0.7).
"""

from __future__ import annotations

import sys
import time
from typing import Any

from _common import emit, parser
from _kafka_targets import started

TARGETS = "rillet-3,kafka-3"
TIMEOUT_S = 120


def _config(bootstrap: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "acks": "all",
        "enable.idempotence": True,
        "linger.ms": 5,
        "batch.size": 256 * 1024,
    }


def _send_for(producer: Any, topic: str, value: bytes, seconds: float) -> int:
    """Produce as fast as the client takes records for ``seconds``; how many it took."""
    sent, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            producer.produce(topic, value)
            sent += 1
        except BufferError:
            producer.poll(0.005)
        if sent % 1000 == 0:
            producer.poll(0)
    return sent


def idempotent(bootstrap: str, topic: str, value: bytes, seconds: float) -> int:
    from confluent_kafka import Producer

    producer = Producer(_config(bootstrap))
    started_at = time.perf_counter()
    sent = _send_for(producer, topic, value, seconds)
    if producer.flush(TIMEOUT_S) != 0:
        raise RuntimeError("records left unacknowledged")
    return round(sent / (time.perf_counter() - started_at))


def transactional(
    bootstrap: str, topic: str, value: bytes, seconds: float, interval_ms: int
) -> tuple[int, int]:
    """(committed records/s, transactions committed)."""
    from confluent_kafka import Producer

    producer = Producer({**_config(bootstrap), "transactional.id": f"{topic}-txn"})
    producer.init_transactions(TIMEOUT_S)
    committed = commits = 0
    started_at = time.perf_counter()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        producer.begin_transaction()
        sent = _send_for(producer, topic, value, interval_ms / 1000)
        producer.commit_transaction(TIMEOUT_S)
        committed += sent
        commits += 1
    return round(committed / (time.perf_counter() - started_at)), commits


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--targets", default=TARGETS, help="comma-separated rillet-N / kafka-N")
    p.add_argument("--seconds", type=float, default=15.0, help="per producer")
    p.add_argument("--record-size", type=int, default=100)
    p.add_argument("--partitions", type=int, default=3)
    p.add_argument("--commit-interval-ms", type=int, default=100)
    args = p.parse_args()
    value = b"x" * args.record_size
    results: dict[str, Any] = {}
    for name in args.targets.split(","):
        with started(name, args) as target:
            topic = f"bench-txn-{time.time_ns()}"
            target.create_topic(topic, args.partitions)
            print(f"{name}: idempotent for {args.seconds:g}s", file=sys.stderr)
            plain = idempotent(target.kafka_bootstrap, topic, value, args.seconds)
            print(f"{name}: transactional for {args.seconds:g}s", file=sys.stderr)
            txn, commits = transactional(
                target.kafka_bootstrap, topic, value, args.seconds, args.commit_interval_ms
            )
            results[name] = {
                "idempotent_records_per_s": plain,
                "transactional_records_per_s": txn,
                "transactions_committed": commits,
                "ratio": round(txn / plain, 3) if plain else None,
            }
            print(f"{name}: {results[name]}", file=sys.stderr)
    emit("transactional_produce", vars(args), results)


if __name__ == "__main__":
    main()
