"""Client clocks against a real node (issue 16): a producer stamping next year is refused
with InvalidTimestampError (1970 too, where a topic opts in with before.max.ms = -1); a
record stamped 1970 is accepted by default, as Kafka does, and retention keeps it for
retention.ms after it was written; a LogAppendTime topic reports the node's append time."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import trio
from cluster_checks import wait_for
from kafka import KafkaProducer  # type: ignore[import-untyped]
from node_process import NodeProcess

from rillet.client import (
    Admin,
    BlockingAdmin,
    BlockingConsumer,
    Consumer,
    NewTopic,
    Producer,
    TopicPartition,
)
from rillet.client.errors import InvalidTimestampError

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
YEAR_MS = 365 * 24 * 3600 * 1000


async def test_stamps_far_from_the_node_clock_are_refused(node: NodeProcess) -> None:
    async with Admin(node.bootstrap) as admin:
        await admin.create_topics(
            [NewTopic("clocks", 1, configs={"message.timestamp.before.max.ms": "-1"})]
        )
    now_ms = int(time.time() * 1000)
    async with Producer(node.bootstrap, acks="all", linger_ms=0) as producer:
        for wrong in (0, now_ms + YEAR_MS):
            with pytest.raises(InvalidTimestampError, match=r"message\.timestamp"):
                await (await producer.send("clocks", b"x", timestamp_ms=wrong))
        ok = await (await producer.send("clocks", b"fine", timestamp_ms=now_ms))
    assert ok.offset == 0  # nothing of the refused batches was written


async def test_log_append_time_replaces_the_producer_clock(node: NodeProcess) -> None:
    async with Admin(node.bootstrap) as admin:
        await admin.create_topics(
            [NewTopic("appended", 1, configs={"message.timestamp.type": "LogAppendTime"})]
        )
    before = int(time.time() * 1000)
    async with Producer(node.bootstrap, acks="all", linger_ms=0) as producer:
        acked = await (await producer.send("appended", b"v", timestamp_ms=0))  # 1970: ignored
    after = int(time.time() * 1000)
    assert before - 1000 <= acked.timestamp_ms <= after + 1000
    tp = TopicPartition("appended", 0)
    async with Consumer(node.bootstrap) as consumer:
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        with trio.fail_after(10):
            records = []
            while not records:
                records.extend(await consumer.poll(timeout_ms=200))
    assert [(r.value, r.timestamp_ms) for r in records] == [(b"v", acked.timestamp_ms)]


def test_a_record_stamped_1970_is_kept_by_retention_passes(
    node_factory: Callable[..., NodeProcess],
) -> None:
    """Accepted over the Kafka listener with the default settings; retention passes (every
    100 ms here) that delete another topic's segments keep its rolled segments, which were
    written just now (Kafka would delete them at the first pass after the roll)."""
    node = node_factory(
        "[kafka_listener]\nenabled = true\nport = 0\n[log]\nsegment_bytes = 1024\n"
        "file_delete_delay_ms = 0\n[tasks]\nretention_check_interval_ms = 100\n"
    ).start()
    old, control = TopicPartition("stamped-1970", 0), TopicPartition("by-size", 0)
    with BlockingAdmin(node.bootstrap) as admin:
        admin.create_topics(
            [
                NewTopic(old.topic, 1, configs={"retention.ms": "600000"}),
                NewTopic(control.topic, 1, configs={"retention.bytes": "1"}),
            ]
        )
    producer = KafkaProducer(bootstrap_servers=node.kafka_bootstrap, acks="all", linger_ms=0)
    try:
        for i in range(4):  # 600-byte records: one batch per 1024-byte segment
            sent = producer.send(old.topic, b"%d" % i + bytes(600), timestamp_ms=i)
            assert sent.get(timeout=30).offset == i
        for _ in range(3):
            producer.send(control.topic, bytes(600)).get(timeout=30)
    finally:
        producer.close()
    with BlockingConsumer(node.bootstrap, fetch_max_wait_ms=100) as consumer:
        # A pass deleted the size-limited topic's segments, so it looked at ours too.
        wait_for("a retention pass", lambda: consumer.beginning_offsets([control])[control] > 0)
        assert consumer.beginning_offsets([old])[old] == 0
        consumer.assign([old])
        consumer.seek_to_beginning(old)
        records: list[tuple[int, int]] = []
        deadline = time.monotonic() + 20
        while len(records) < 4 and time.monotonic() < deadline:
            records += [(r.offset, r.timestamp_ms) for r in consumer.poll(timeout_ms=200)]
    assert records == [(i, i) for i in range(4)]
