"""Log compaction on a real node: a compacted topic refuses records without a key, and its
cleaner, running in the background, keeps the latest value per key at the original offsets
(consumers read across the gaps). Crashes during a clean: tests/unit/partition_store."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import trio
from node_process import NodeProcess

from rillet.client import Admin, Consumer, NewTopic, Producer, TopicPartition
from rillet.client.errors import InvalidRecordError

pytestmark = pytest.mark.integration
TOPIC = "table"
KEYS = 10
WRITES = 300
Row = tuple[int, bytes | None, bytes | None]


async def read_all(bootstrap: str, end_offset: int) -> list[Row]:
    """Every record from the start up to ``end_offset``, offset gaps and all."""
    tp = TopicPartition(TOPIC, 0)
    rows: list[Row] = []
    async with Consumer(bootstrap) as consumer:
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        with trio.fail_after(15):
            while await consumer.position(tp) < end_offset:
                rows += [(r.offset, r.key, r.value) for r in await consumer.poll(timeout_ms=100)]
    return rows


async def test_a_compacted_topic_keeps_the_latest_value_per_key(
    node_factory: Callable[..., NodeProcess],
) -> None:
    node = node_factory("[tasks]\nlog_cleaner_backoff_ms = 50\n").start()
    configs = {
        "cleanup.policy": "compact",
        "segment.bytes": "1024",
        "min.cleanable.dirty.ratio": "0.01",
    }
    async with Admin(node.bootstrap) as admin:
        await admin.create_topics([NewTopic(TOPIC, 1, configs=configs)])
    written: list[Row] = []
    async with Producer(node.bootstrap, acks="all", linger_ms=0) as producer:
        with pytest.raises(InvalidRecordError, match="key"):
            await (await producer.send(TOPIC, b"no key"))
        for wave in range(0, WRITES, KEYS):  # one overwrite of every key per round trip
            pending = []
            for i in range(wave, wave + KEYS):
                key, value = f"k{i % KEYS}".encode(), f"v{i}".encode()
                pending.append((await producer.send(TOPIC, value, key=key), key, value))
            for future, key, value in pending:
                written.append(((await future).offset, key, value))
    assert written[0][0] == 0  # the keyless record was never written
    latest = {key: (offset, key, value) for offset, key, value in written}
    with trio.fail_after(20):  # the cleaner runs in the background
        while len(rows := await read_all(node.bootstrap, WRITES)) > WRITES // 3:
            await trio.sleep(0.1)
    assert set(rows) <= set(written)  # original offsets, nothing invented
    assert {row[1]: row for row in rows} == latest  # the latest value of every key
