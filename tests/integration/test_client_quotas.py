"""Byte-rate quotas on a real node: clients over their quota are slowed to it, and Kafka
clients are told how long to wait (``throttle_time_ms``).

Only lower bounds on time are asserted (a quota can make a client slower, never faster), so
a loaded machine cannot make these tests fail.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Producer as KafkaProducer
from node_process import NodeProcess

from rillet.client import BlockingAdmin, BlockingConsumer, BlockingProducer, NewTopic
from rillet.client.types import TopicPartition

pytestmark = pytest.mark.integration

RATE = 250_000  # bytes per second
TOTAL = 1_000_000  # bytes moved: the first RATE are the burst, the rest take >= 3 s
VALUE = b"v" * 10_000


def _kafka_bootstrap(node: NodeProcess) -> str:
    ready = json.loads((node.log_dir / f"ready-{node.starts}.json").read_text())
    return f"127.0.0.1:{ready['kafka_port']}"


def test_a_kafka_producer_over_its_quota_is_throttled_and_told_so(
    node_factory: Callable[..., NodeProcess],
) -> None:
    node = node_factory(
        f"[kafka_listener]\nenabled = true\nport = 0\n[quotas]\nproducer_byte_rate = {RATE}\n"
    ).start()
    with BlockingAdmin(node.bootstrap) as admin:
        admin.create_topics([NewTopic("quota-produce", 1)])
    throttles: list[int] = []
    errors: list[Any] = []

    def on_throttle(event: Any) -> None:
        throttles.append(int(event.throttle_time * 1000))

    producer = KafkaProducer(
        {
            "bootstrap.servers": _kafka_bootstrap(node),
            "enable.idempotence": True,
            "linger.ms": 5,
            "throttle_cb": on_throttle,
        }
    )
    started = time.monotonic()
    for _ in range(TOTAL // len(VALUE)):
        producer.produce(
            "quota-produce", VALUE, on_delivery=lambda err, msg: err and errors.append(err)
        )
        producer.poll(0)
    assert producer.flush(60) == 0
    elapsed_s = time.monotonic() - started
    assert errors == []
    assert elapsed_s >= (TOTAL - RATE) / RATE * 0.9, elapsed_s
    assert throttles and max(throttles) > 0, throttles


def test_a_native_consumer_over_its_quota_reads_at_the_quota(
    node_factory: Callable[..., NodeProcess],
) -> None:
    node = node_factory(f"[quotas]\nconsumer_byte_rate = {RATE}\n").start()
    with BlockingAdmin(node.bootstrap) as admin:
        admin.create_topics([NewTopic("quota-fetch", 1)])
    count = TOTAL // len(VALUE)
    # Batches of one or two records: an answer holds at least one whole batch, so batches
    # larger than the answer limit (256 kB by default) would leave more than 100 kB unpaced.
    with BlockingProducer(node.bootstrap, acks="all", batch_bytes=20_000) as producer:
        for _ in range(count):
            producer.send("quota-fetch", VALUE)
        producer.flush()
    tp = TopicPartition("quota-fetch", 0)
    got = 0
    # Answers of at most 100 kB: the node charges an answer when it sends it and then waits
    # out the debt before reading the next fetch, so all but the last answer are paced.
    started = time.monotonic()
    with BlockingConsumer(
        node.bootstrap, fetch_max_wait_ms=50, max_partition_fetch_bytes=100_000
    ) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        deadline = started + 60
        while got < count and time.monotonic() < deadline:
            got += len(consumer.poll(timeout_ms=500))
        elapsed_s = time.monotonic() - started
    assert got == count
    assert elapsed_s >= (TOTAL - RATE - 100_000) / RATE * 0.9, elapsed_s
