"""The consumer against the fake cluster: positions, seeks, resets, leaders, prefetch."""

from __future__ import annotations

import struct
from typing import Any

import pytest
import trio
from client_fakes import FakeCluster

from rillet.client import Consumer, OffsetAndTimestamp, Producer, TopicPartition
from rillet.client.errors import (
    ClientClosedError,
    CorruptMessageError,
    NoOffsetForPartitionError,
    OffsetOutOfRangeError,
    RilletError,
)
from rillet.client.types import ConsumerRecord
from rillet.wire.batch import encode_batch_from_payload
from rillet.wire.messages import FetchRequest

FAST: dict[str, Any] = {"retry_backoff_ms": 5, "request_timeout_ms": 2000}
A, B = TopicPartition("t", 0), TopicPartition("t", 1)


async def produce(cluster: FakeCluster, tp: TopicPartition, values: list[bytes]) -> None:
    async with Producer(cluster.bootstrap, linger_ms=0) as producer:
        for v in values:
            await producer.send(tp.topic, v, partition=tp.partition, timestamp_ms=1000 + len(v))
        await producer.flush()


async def drain(consumer: Consumer, n: int, **kw: int) -> list[ConsumerRecord]:
    out: list[ConsumerRecord] = []
    with trio.fail_after(5):
        while len(out) < n:
            out.extend(await consumer.poll(timeout_ms=1000, **kw))
    return out


async def test_reads_every_partition_in_order(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 2)
    await produce(cluster, A, [f"a{i}".encode() for i in range(50)])
    await produce(cluster, B, [f"b{i}".encode() for i in range(30)])
    async with Consumer(cluster.bootstrap, fetch_max_wait_ms=50, **FAST) as consumer:
        consumer.assign([A, B])
        assert consumer.assignment() == {A, B}
        await consumer.seek_to_beginning()
        records = await drain(consumer, 80, max_records=7)
        assert [r.value for r in records if r.partition == 0] == [
            f"a{i}".encode() for i in range(50)
        ]
        assert [r.offset for r in records if r.partition == 1] == list(range(30))
        assert await consumer.position(A) == 50 and await consumer.position(B) == 30
        assert consumer.highwater(A) == 50


async def test_seek_inside_a_batch_skips_the_records_before_it(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    async with Producer(cluster.bootstrap, linger_ms=50) as producer:
        for i in range(10):
            await producer.send("t", f"{i}".encode(), partition=0)
    assert len(cluster.logs[("t", 0)].batches) == 1  # one batch holding offsets 0..9
    async with Consumer(cluster.bootstrap, fetch_max_wait_ms=50, **FAST) as consumer:
        consumer.assign([A])
        consumer.seek(A, 6)
        assert await consumer.position(A) == 6
        records = await drain(consumer, 4)
        assert [r.offset for r in records] == [6, 7, 8, 9]


async def test_latest_policy_and_seek_to_end_see_only_new_records(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    await produce(cluster, A, [b"old"])
    async with Consumer(
        cluster.bootstrap, fetch_max_wait_ms=50, auto_offset_reset="latest", **FAST
    ) as consumer:
        consumer.assign([A])
        assert await consumer.position(A) == 1
        assert await consumer.poll(timeout_ms=50) == []
        await produce(cluster, A, [b"new"])
        assert [r.value for r in await drain(consumer, 1)] == [b"new"]
        await consumer.seek_to_beginning(A)
        assert [r.value for r in await drain(consumer, 2)] == [b"old", b"new"]
        await consumer.seek_to_end(A)
        assert await consumer.position(A) == 2


async def test_out_of_range_resets_or_raises(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    await produce(cluster, A, [f"{i}".encode() for i in range(10)])
    cluster.logs[("t", 0)].start_offset = 4  # as if retention removed offsets 0..3
    async with Consumer(cluster.bootstrap, fetch_max_wait_ms=50, **FAST) as consumer:
        consumer.assign([A])
        consumer.seek(A, 1)
        records = await drain(consumer, 6)
        assert [r.offset for r in records] == [4, 5, 6, 7, 8, 9]
    async with Consumer(
        cluster.bootstrap, fetch_max_wait_ms=50, auto_offset_reset="none", **FAST
    ) as consumer:
        consumer.assign([A])
        with trio.fail_after(5), pytest.raises(NoOffsetForPartitionError):
            await consumer.poll(timeout_ms=1000)
        consumer.seek(A, 50)
        with trio.fail_after(5), pytest.raises(OffsetOutOfRangeError):
            await consumer.poll(timeout_ms=1000)
        consumer.seek(A, 8)
        assert [r.offset for r in await drain(consumer, 2)] == [8, 9]


async def test_a_moved_leader_is_found_again(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1, leader=0)
    await produce(cluster, A, [b"one"])
    async with Consumer(cluster.bootstrap, fetch_max_wait_ms=50, **FAST) as consumer:
        consumer.assign([A])
        assert [r.value for r in await drain(consumer, 1)] == [b"one"]
        cluster.move_leader(("t", 0), 1)
        await produce(cluster, A, [b"two"])
        assert [r.value for r in await drain(consumer, 1)] == [b"two"]
    assert 1 in {node for node, _ in cluster.of_type(FetchRequest)}


async def test_corrupt_batches_raise_and_can_be_skipped(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    await produce(cluster, A, [b"good"])
    await produce(cluster, A, [b"hello"])
    cluster.logs[("t", 0)].batches[1][-3] ^= 0xFF
    async with Consumer(cluster.bootstrap, fetch_max_wait_ms=50, **FAST) as consumer:
        consumer.assign([A])
        consumer.seek(A, 1)
        with trio.fail_after(5), pytest.raises(CorruptMessageError, match="t-0"):
            await drain(consumer, 1)
    async with Consumer(
        cluster.bootstrap, fetch_max_wait_ms=50, check_crcs=False, **FAST
    ) as consumer:
        consumer.assign([A])
        consumer.seek(A, 0)
        assert len(await drain(consumer, 2)) == 2  # CRC not checked: the payload still parses


async def test_a_batch_whose_records_do_not_parse_is_raised_when_polled_after_those_before(
    cluster: FakeCluster,
) -> None:
    """Batches are decoded as poll reaches them: records before a batch that passes its
    CRC but does not parse (a faulty producer) are handed out first; the poll that reaches
    it raises, so does every later one (it is fetched again), until a seek past it."""
    cluster.create_topic("t", 1)
    for value in (b"good", b"bad", b"after"):
        await produce(cluster, A, [value])
    log = cluster.logs[("t", 0)]
    (base_offset,) = struct.unpack_from(">q", log.batches[1])
    log.batches[1] = bytearray(
        encode_batch_from_payload(
            b"\x02\x00",  # one record of one byte: no room for its fields
            record_count=1,
            first_timestamp_ms=1000,
            max_timestamp_ms=1000,
            base_offset=base_offset,
        )
    )
    async with Consumer(cluster.bootstrap, fetch_max_wait_ms=50, **FAST) as consumer:
        consumer.assign([A])
        consumer.seek(A, 0)
        assert [r.value for r in await drain(consumer, 1)] == [b"good"]
        for _ in range(2):
            with trio.fail_after(5), pytest.raises(CorruptMessageError, match="t-0 at offset 1"):
                await drain(consumer, 1)
        assert await consumer.position(A) == 1
        consumer.seek(A, 2)
        assert [r.value for r in await drain(consumer, 1)] == [b"after"]


async def test_the_next_fetch_is_in_flight_while_the_application_works(
    cluster: FakeCluster,
) -> None:
    cluster.create_topic("t", 1)
    await produce(cluster, A, [b"x"] * 5)
    async with Consumer(cluster.bootstrap, fetch_max_wait_ms=2000, **FAST) as consumer:
        consumer.assign([A])
        assert len(await drain(consumer, 5)) == 5
        fetches = len(cluster.of_type(FetchRequest))
        with trio.fail_after(5):
            await cluster.wait_for(FetchRequest, fetches + 1)  # without another poll


async def test_offset_lookups(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 2)
    await produce(cluster, A, [b"a", b"bb", b"ccc"])  # timestamps 1001, 1002, 1003
    async with Consumer(cluster.bootstrap, **FAST) as consumer:
        assert await consumer.beginning_offsets([A, B]) == {A: 0, B: 0}
        assert await consumer.end_offsets([A, B]) == {A: 3, B: 0}
        found = await consumer.offsets_for_times({A: 1002, B: 1000})
        assert found == {A: OffsetAndTimestamp(1, 1002), B: None}
        with pytest.raises(ValueError):
            await consumer.offsets_for_times({A: -1})


async def test_poll_is_bounded_and_needs_an_assignment(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    async with Consumer(cluster.bootstrap, fetch_max_wait_ms=1000, **FAST) as consumer:
        with pytest.raises(RilletError, match="assign"):
            await consumer.poll()
        consumer.assign([A])
        with trio.fail_after(2):
            assert await consumer.poll(timeout_ms=100) == []
        with pytest.raises(RilletError, match="not assigned"):
            consumer.seek(TopicPartition("t", 9), 0)


async def test_closing_ends_a_waiting_poll(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    consumer = Consumer(cluster.bootstrap, fetch_max_wait_ms=5000, **FAST)
    failures: list[BaseException] = []
    async with consumer:
        consumer.assign([A])

        async def poller() -> None:
            try:
                await consumer.poll(timeout_ms=60_000)
            except ClientClosedError as exc:
                failures.append(exc)

        with trio.fail_after(5):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(poller)
                await cluster.wait_for(FetchRequest, 1)  # the poll is waiting for data
                await consumer.close()
    assert len(failures) == 1


async def test_a_paused_partition_is_neither_returned_nor_fetched(cluster: FakeCluster) -> None:
    """What a group member's revocation relies on (test_group_consumer_revoke.py): once a
    partition's state is paused, poll never hands out its buffered records and the fetcher
    asks for it no more, so its position stays where the commit on revoke reads it."""
    cluster.create_topic("t", 2)
    await produce(cluster, A, [b"a0", b"a1"])
    await produce(cluster, B, [b"b0", b"b1"])
    async with Consumer(cluster.bootstrap, fetch_max_wait_ms=20, **FAST) as consumer:
        consumer.assign([A, B])
        await consumer.seek_to_beginning()
        with trio.fail_after(5):  # both partitions' records buffered, none handed out yet
            while any(consumer._sub.state(tp).buffered < 2 for tp in (A, B)):
                await trio.sleep(0.01)
        consumer._sub.state(B).paused = True
        assert [r.value for r in await drain(consumer, 2)] == [b"a0", b"a1"]
        assert await consumer.poll(timeout_ms=100) == []
        assert await consumer.position(B) == 0

    async with Consumer(cluster.bootstrap, fetch_max_wait_ms=20, **FAST) as consumer:
        consumer.assign([A, B])
        await consumer.seek_to_beginning()
        assert len(await drain(consumer, 4)) == 4  # nothing buffered any more
        consumer._sub.state(B).paused = True
        fetches_before = len(cluster.of_type(FetchRequest))
        await produce(cluster, A, [b"a2"])
        await produce(cluster, B, [b"b2"])
        assert [r.value for r in await drain(consumer, 1)] == [b"a2"]
        asked = [
            (p.topic, p.partition)
            for _, req in cluster.of_type(FetchRequest)[fetches_before:]
            for p in req.partitions
        ]
        assert ("t", 0) in asked and ("t", 1) not in asked
        assert await consumer.position(B) == 2
