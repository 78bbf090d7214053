"""Node behaviour that clients rely on: graceful shutdown, long polls, time lookups."""

from __future__ import annotations

import time

import pytest
import trio
from node_process import NodeProcess

from rillet.client import Admin, Consumer, NewTopic, OffsetAndTimestamp, Producer, TopicPartition
from rillet.wire.messages import FetchPartition, FetchRequest

pytestmark = pytest.mark.integration


async def test_sigterm_shuts_down_cleanly_and_restart_keeps_data(node: NodeProcess) -> None:
    async with Admin(node.bootstrap) as admin:
        await admin.create_topics([NewTopic("graceful", 2)])
    async with Producer(node.bootstrap, acks="all") as producer:
        for i in range(100):
            await producer.send("graceful", f"g{i}".encode(), partition=i % 2)
    assert node.terminate() == 0
    assert "stopped" in node.log_tail()
    assert (node.data_dir / "graceful-0" / "clean-shutdown").exists()
    node.start()
    tps = [TopicPartition("graceful", p) for p in range(2)]
    async with Consumer(node.bootstrap) as consumer:
        assert await consumer.end_offsets(tps) == {tps[0]: 50, tps[1]: 50}


async def test_fetch_long_poll_waits_for_data_and_wakes_when_it_arrives(
    node: NodeProcess,
) -> None:
    async with Admin(node.bootstrap) as admin:
        await admin.create_topics([NewTopic("poll", 1)])
    async with Consumer(node.bootstrap) as consumer, Producer(node.bootstrap, acks=1) as producer:
        cluster = consumer._cluster  # the raw connection shows the node's own timing
        await cluster.refresh_metadata(["poll"])
        conn = await cluster.connection(1)
        empty = FetchRequest(400, 1, 1 << 20, [FetchPartition("poll", 0, 0, 1 << 20)])
        started = time.monotonic()
        response = await conn.request(empty, 10)
        waited = time.monotonic() - started
        assert 0.35 <= waited < 2.0  # held for max_wait_ms, then answered empty
        assert response.partitions[0].high_watermark == 0

        async def produce_later() -> None:
            await trio.sleep(0.2)
            await (await producer.send("poll", b"wake up"))

        long_poll = FetchRequest(5000, 1, 1 << 20, [FetchPartition("poll", 0, 0, 1 << 20)])
        async with trio.open_nursery() as nursery:
            nursery.start_soon(produce_later)
            started = time.monotonic()
            response = await conn.request(long_poll, 10)
            waited = time.monotonic() - started
        assert 0.15 <= waited < 2.0  # woken by the append, long before max_wait_ms
        assert response.partitions[0].high_watermark == 1


async def test_offsets_for_times_and_explicit_timestamps(node: NodeProcess) -> None:
    async with Admin(node.bootstrap) as admin:
        # Historical timestamps: the topic accepts any age (a backfill topic would, too).
        await admin.create_topics(
            [NewTopic("times", 1, configs={"message.timestamp.before.max.ms": str(2**63 - 1)})]
        )
    base = 1_700_000_000_000
    async with Producer(node.bootstrap, acks="all", linger_ms=0) as producer:
        for i in range(10):
            await (await producer.send("times", b"t", timestamp_ms=base + 1000 * i))
    tp = TopicPartition("times", 0)
    async with Consumer(node.bootstrap) as consumer:
        found = await consumer.offsets_for_times({tp: base + 4500})
        assert found == {tp: OffsetAndTimestamp(5, base + 5000)}
        assert await consumer.offsets_for_times({tp: base + 10**9}) == {tp: None}
        consumer.assign([tp])
        consumer.seek(tp, 5)
        with trio.fail_after(10):
            records = []
            while len(records) < 5:
                records.extend(await consumer.poll(timeout_ms=200))
        assert [r.timestamp_ms for r in records] == [base + 1000 * i for i in range(5, 10)]


async def test_segments_on_disk_follow_the_documented_layout(node_factory: object) -> None:
    node = node_factory(config_text="[log]\nsegment_bytes = 2048\n").start()  # type: ignore[operator]
    async with Admin(node.bootstrap) as admin:
        await admin.create_topics([NewTopic("layout", 1)])
    async with Producer(node.bootstrap, acks=1, linger_ms=0) as producer:
        for _ in range(60):
            await (await producer.send("layout", bytes(100)))
    assert node.terminate() == 0  # a clean stop: every index is on disk (written at flushes)
    files = sorted(p.name for p in (node.data_dir / "layout-0").iterdir())
    logs = [f for f in files if f.endswith(".log")]
    assert logs[0] == "00000000000000000000.log" and len(logs) > 2
    for name in logs:
        stem = name.removesuffix(".log")
        assert len(stem) == 20 and stem.isdigit()
        assert f"{stem}.index" in files and f"{stem}.timeindex" in files
    assert "partition.meta" in files


async def test_explicit_close_flushes_and_makes_exit_a_no_op(node: NodeProcess) -> None:
    async with Admin(node.bootstrap) as admin:
        await admin.create_topics([NewTopic("closing", 1)])
    async with Producer(node.bootstrap, acks="all", linger_ms=1000) as producer:
        fut = await producer.send("closing", b"last words")
        await producer.close()  # flushes despite the long linger
        assert fut.done() and fut.result().offset == 0
