"""Produce -> disk -> fetch against a real ``rillet node`` process on 127.0.0.1."""

from __future__ import annotations

import os

import pytest
import trio
from node_process import NodeProcess

from rillet.client import Admin, Consumer, NewTopic, Producer, TopicPartition
from rillet.client.errors import (
    InvalidTopicError,
    TopicAlreadyExistsError,
)

pytestmark = pytest.mark.integration


async def create_topic(bootstrap: str, name: str, partitions: int, **configs: str) -> None:
    """Create the topic and wait until the node leads every partition: a write in the first
    moments after creation is answered NOT_LEADER_OR_FOLLOWER and retried, and without
    idempotence a retried batch lands after a later one (docs/client.md, Ordering), which
    the order checks here must not depend on."""
    async with Admin(bootstrap) as admin:
        await admin.create_topics([NewTopic(name, partitions, 1, dict(configs))])
    async with Consumer(bootstrap) as consumer:
        await consumer.end_offsets([TopicPartition(name, p) for p in range(partitions)])


async def read_all(bootstrap: str, topic: str, partitions: int, expected: int) -> list:  # type: ignore[type-arg]
    """Every record of every partition from the beginning, waiting up to 20 s for ``expected``."""
    out = []
    async with Consumer(bootstrap, fetch_max_wait_ms=100) as consumer:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        with trio.fail_after(20):
            while len(out) < expected:
                out.extend(await consumer.poll(timeout_ms=200))
        # nothing beyond what was expected
        out.extend(await consumer.poll(timeout_ms=300))
    return out


@pytest.mark.parametrize("acks", [0, 1, "all"])
async def test_produce_each_acks_level_and_consume_back_identical_in_order(
    node: NodeProcess, acks: object
) -> None:
    topic = f"acks-{acks}"
    await create_topic(node.bootstrap, topic, 3)
    sent: dict[int, list[tuple[bytes | None, bytes, list[tuple[str, bytes]]]]] = {
        0: [],
        1: [],
        2: [],
    }
    async with Producer(node.bootstrap, acks=acks, linger_ms=2) as producer:  # type: ignore[arg-type]
        futures = []
        for i in range(3000):
            p = i % 3
            key = None if i % 7 == 0 else f"k{i}".encode()
            value = os.urandom(i % 300)  # includes empty values
            headers = [("i", str(i).encode())] if i % 5 == 0 else []
            sent[p].append((key, value, headers))
            futures.append(
                (p, await producer.send(topic, value, key=key, headers=headers, partition=p))
            )
        await producer.flush()
        if acks != 0:
            offsets: dict[int, list[int]] = {0: [], 1: [], 2: []}
            for p, fut in futures:
                md = await fut
                assert md.partition == p
                offsets[p].append(md.offset)
            for p, got_offsets in offsets.items():
                assert got_offsets == list(range(len(sent[p])))
    records = await read_all(node.bootstrap, topic, 3, 3000)
    assert len(records) == 3000
    for p in range(3):
        got = [r for r in records if r.partition == p]
        assert [r.offset for r in got] == list(range(len(sent[p])))
        assert [(r.key, r.value, list(r.headers)) for r in got] == sent[p]


async def test_admin_errors_are_typed(node: NodeProcess) -> None:
    await create_topic(node.bootstrap, "dup", 1)
    with pytest.raises(TopicAlreadyExistsError):
        await create_topic(node.bootstrap, "dup", 1)
    with pytest.raises(InvalidTopicError):
        await create_topic(node.bootstrap, "bad name!", 1)
    async with Admin(node.bootstrap) as admin:
        assert "dup" in await admin.list_topics()
        await admin.delete_topics(["dup"])
        assert "dup" not in await admin.list_topics()
    async with Producer(node.bootstrap, acks=1, delivery_timeout_ms=1500) as producer:
        # A valid unknown name is created (auto.create.topics.enable); this one cannot be.
        with pytest.raises(InvalidTopicError):
            fut = await producer.send("never created", b"x")
            await fut


async def test_restart_after_sigkill_mid_produce_keeps_every_acknowledged_record(
    node: NodeProcess,
) -> None:
    topic = "crash"
    await create_topic(node.bootstrap, topic, 2)
    acknowledged: list[tuple[int, int, bytes]] = []
    send_ch, recv_ch = trio.open_memory_channel[tuple[bytes, object]](10_000)

    async def sender(producer: Producer) -> None:
        for i in range(10**9):
            value = f"v{i}".encode()
            await send_ch.send((value, await producer.send(topic, value, partition=i % 2)))
            if i % 100 == 0:
                await trio.sleep(0.001)

    async def acker() -> None:
        async for value, fut in recv_ch:
            try:
                md = await fut  # type: ignore[misc]
            except Exception:
                return  # the node is gone: later futures can only fail too
            acknowledged.append((md.partition, md.offset, value))

    async with (
        Producer(node.bootstrap, acks="all", linger_ms=1, delivery_timeout_ms=2000) as producer,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(sender, producer)
        nursery.start_soon(acker)
        with trio.fail_after(30):
            while len(acknowledged) < 2000:
                await trio.sleep(0.005)
        node.kill()  # SIGKILL mid-produce: batches are in flight
        nursery.cancel_scope.cancel()

    node.start()
    by_position = {(p, o): v for p, o, v in acknowledged}
    # At least every record up to the last acknowledged offset of each partition.
    expected = sum(max(o for pp, o, _ in acknowledged if pp == p) + 1 for p in range(2))
    records = await read_all(node.bootstrap, topic, 2, expected)
    got = {(r.partition, r.offset): r.value for r in records}
    missing = [k for k in by_position if got.get(k) != by_position[k]]
    assert not missing, f"acknowledged records lost or changed: {missing[:5]}"
    for p in range(2):
        offs = sorted(o for (pp, o) in got if pp == p)
        assert offs == list(range(len(offs))), "gap in a recovered partition"


async def test_flushed_records_survive_sigkill_with_fsync_policy(
    node_factory: object,
) -> None:
    node = node_factory(config_text="[log]\nflush_messages = 1\n").start()  # type: ignore[operator]
    topic = "fsynced"
    await create_topic(node.bootstrap, topic, 1)
    async with Producer(node.bootstrap, acks="all", linger_ms=0) as producer:
        mds = []
        for i in range(200):
            mds.append(await (await producer.send(topic, f"r{i}".encode())))
    node.kill()
    node.start()
    records = await read_all(node.bootstrap, topic, 1, 200)
    assert [r.value for r in records] == [f"r{i}".encode() for i in range(200)]
    assert [r.offset for r in records] == [md.offset for md in mds]


async def test_retention_deletes_old_segments(node_factory: object) -> None:
    node = node_factory(  # type: ignore[operator]
        config_text=(
            "[log]\nsegment_bytes = 4096\nfile_delete_delay_ms = 0\n"
            "[tasks]\nretention_check_interval_ms = 100\n"
        )
    ).start()
    topic = "short-lived"
    await create_topic(node.bootstrap, topic, 1, **{"retention.bytes": "8192"})
    async with Producer(node.bootstrap, acks=1, linger_ms=0, batch_bytes=1024) as producer:
        for i in range(400):
            await producer.send(topic, os.urandom(100) + str(i).encode())
            if i % 20 == 0:
                await producer.flush()
        await producer.flush()
    part_dir = node.data_dir / f"{topic}-0"
    tp = TopicPartition(topic, 0)
    async with Consumer(node.bootstrap) as consumer:
        with trio.fail_after(20):
            while True:
                start = (await consumer.beginning_offsets([tp]))[tp]
                segments = sorted(part_dir.glob("*.log"))
                size = sum(s.stat().st_size for s in segments)
                if start > 0 and size <= 8192 + 4096 + 2048:
                    break
                await trio.sleep(0.05)
        end = (await consumer.end_offsets([tp]))[tp]
        assert end == 400
        assert segments[0].name == f"{start:020d}.log"
        consumer.assign([tp])
        consumer.seek(tp, start)
        records = []
        with trio.fail_after(10):
            while len(records) < end - start:
                records.extend(await consumer.poll(timeout_ms=200))
        assert [r.offset for r in records] == list(range(start, end))
