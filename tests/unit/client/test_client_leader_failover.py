"""A paused partition leader holds its partitions up only until the metadata names another.

Issue 16: with a leader stopped by SIGSTOP, the controller fenced it after
``broker_session_timeout_ms`` and elected new leaders, but producers and consumers kept
waiting for their requests to the stopped node for the whole request timeout (30 s). Now a
request outstanding past ``leader_check_ms`` makes the client re-check the metadata, and the
partitions whose leader moved are abandoned and retried at the new leader at once. Each
test gives the request timeout 30 s and fails after 10 s: without the fix they time out.
"""

from __future__ import annotations

from typing import Any

import trio
from client_fakes import FakeCluster

from rillet.client import Consumer, Producer, TopicPartition
from rillet.client.cluster import ClusterClient
from rillet.client.leader_watch import LeaderMovedError
from rillet.wire.messages import (
    FetchPartition,
    FetchRequest,
    ListOffsetsRequest,
    MetadataRequest,
    ProduceRequest,
)

SLOW_TIMEOUT: dict[str, Any] = {"request_timeout_ms": 30_000, "leader_check_ms": 100}
TP0 = ("t", 0)


async def test_an_idempotent_batch_to_a_paused_leader_is_resent_to_the_new_one(
    cluster: FakeCluster,
) -> None:
    cluster.create_topic("t", 2, leader=0)
    async with Producer(cluster.bootstrap, acks="all", linger_ms=0, **SLOW_TIMEOUT) as producer:
        await (await producer.send("t", b"before", partition=0))
        cluster.paused.add(0)  # node 0 takes requests and answers nothing (SIGSTOP)
        pending = await producer.send("t", b"during", partition=0)
        await cluster.wait_for(ProduceRequest, 2)
        cluster.move_leader(TP0, 1)  # the controller elected node 1 (epoch 1)
        with trio.fail_after(10):
            md = await pending
        cluster.resume(0)
    assert (md.partition, md.offset) == (0, 1)
    assert cluster.values(TP0) == [b"before", b"during"]
    sends = [(node, r) for node, r in cluster.of_type(ProduceRequest)]
    (to_old, old), (to_new, new) = sends[-2:]
    assert (to_old, to_new) == (0, 1)
    # The very same batch (producer id, epoch, sequence), so a new leader that had it
    # answers with its offset instead of writing it twice.
    assert bytes(old.partitions[0].records) == bytes(new.partitions[0].records)
    # The check asked node 1: node 0 was stalled (its connections stay open).
    assert any(node == 1 for node, _ in cluster.of_type(MetadataRequest))


async def test_only_the_partitions_that_moved_are_abandoned(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 2, leader=0)
    async with Producer(cluster.bootstrap, acks="all", linger_ms=20, **SLOW_TIMEOUT) as producer:
        for p in (0, 1):
            await (await producer.send("t", b"warm", partition=p))
        cluster.paused.add(0)
        moved = await producer.send("t", b"m", partition=0)
        stayed = await producer.send("t", b"s", partition=1)
        await cluster.wait_for(ProduceRequest, 3)
        cluster.move_leader(TP0, 1)
        with trio.fail_after(10):
            await moved
        assert not stayed.done()  # its leader did not change: still waiting for node 0
        cluster.resume(0)
        with trio.fail_after(10):
            await stayed
    assert cluster.values(TP0) == [b"warm", b"m"]
    assert cluster.values(("t", 1)) == [b"warm", b"s"]


async def test_a_consumer_fetches_from_the_new_leader_during_the_pause(
    cluster: FakeCluster,
) -> None:
    cluster.create_topic("t", 1, leader=0)
    tp = TopicPartition("t", 0)
    async with (
        Producer(cluster.bootstrap, linger_ms=0, **SLOW_TIMEOUT) as producer,
        Consumer(cluster.bootstrap, fetch_max_wait_ms=100, **SLOW_TIMEOUT) as consumer,
    ):
        await (await producer.send("t", b"r0", partition=0))
        consumer.assign([tp])
        consumer.seek(tp, 0)
        with trio.fail_after(10):
            while not (records := await consumer.poll(timeout_ms=100)):
                pass
        assert [r.value for r in records] == [b"r0"]
        fetches = len(cluster.of_type(FetchRequest))
        cluster.paused.add(0)
        await cluster.wait_for(FetchRequest, fetches + 1)  # the next fetch is stuck on node 0
        cluster.move_leader(TP0, 1)
        await (await producer.send("t", b"r1", partition=0))
        got: list[bytes | None] = []
        with trio.fail_after(10):
            while not got:
                got = [r.value for r in await consumer.poll(timeout_ms=100)]
        cluster.resume(0)
    assert got == [b"r1"]


async def test_a_leader_bound_request_raises_leader_moved(cluster: FakeCluster) -> None:
    """The mechanism offered to every leader-bound call (the Spark range reader, admin)."""
    cluster.create_topic("t", 1, leader=0)
    async with ClusterClient(cluster.bootstrap, leader_check_ms=100) as client:
        await client.refresh_metadata(["t"])
        conn = await client.connection(0)
        cluster.paused.add(0)
        request = FetchRequest(0, 1, 1 << 20, [FetchPartition("t", 0, 0, 1 << 20)])
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:

                async def elect() -> None:
                    await cluster.wait_for(FetchRequest, 1)
                    cluster.move_leader(TP0, 1)

                nursery.start_soon(elect)
                try:
                    await client.leader_request(conn, 0, request, [TP0], 30.0)
                except LeaderMovedError as exc:
                    assert exc.partitions == [TP0]
                else:
                    raise AssertionError("the request to the paused node was not abandoned")
        assert client.leader_for(TP0) == 1
        assert len(client.leader_watch) == 0
        cluster.resume(0)


async def test_an_offset_lookup_moves_to_the_new_leader(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1, leader=0)
    tp = TopicPartition("t", 0)
    async with Consumer(cluster.bootstrap, **SLOW_TIMEOUT) as consumer:
        assert await consumer.end_offsets([tp]) == {tp: 0}
        cluster.paused.add(0)
        async with trio.open_nursery() as nursery:

            async def elect() -> None:
                await cluster.wait_for(ListOffsetsRequest, 2)
                cluster.move_leader(TP0, 1)

            nursery.start_soon(elect)
            with trio.fail_after(10):
                assert await consumer.end_offsets([tp]) == {tp: 0}
        cluster.resume(0)
    assert [node for node, _ in cluster.of_type(ListOffsetsRequest)][-1] == 1


async def test_batches_queued_behind_an_abandoned_one_keep_their_order(
    cluster: FakeCluster,
) -> None:
    cluster.create_topic("t", 1, leader=0)
    async with Producer(cluster.bootstrap, acks="all", linger_ms=0, **SLOW_TIMEOUT) as producer:
        await (await producer.send("t", b"0", partition=0))
        cluster.paused.add(0)
        first = await producer.send("t", b"1", partition=0)
        await cluster.wait_for(ProduceRequest, 2)
        later = [await producer.send("t", f"{i}".encode(), partition=0) for i in (2, 3, 4)]
        cluster.move_leader(TP0, 1)
        with trio.fail_after(10):
            offsets = [(await f).offset for f in [first, *later]]
        cluster.resume(0)
    assert offsets == [1, 2, 3, 4]
    assert cluster.values(TP0) == [b"0", b"1", b"2", b"3", b"4"]


async def test_a_stalled_node_is_not_asked_for_metadata_through_its_bootstrap_address(
    cluster: FakeCluster,
) -> None:
    """The client's first connection went to the bootstrap address, which is node 0. While
    node 0 is stalled, and after it was fenced (it leaves the metadata), metadata must be
    asked elsewhere, or each refresh would wait on the paused node."""
    cluster.create_topic("t", 1, leader=0)
    async with Producer(cluster.bootstrap, linger_ms=0, **SLOW_TIMEOUT) as producer:
        await (await producer.send("t", b"before", partition=0))
        asked_before = len(cluster.of_type(MetadataRequest))
        cluster.paused.add(0)
        pending = await producer.send("t", b"during", partition=0)
        await cluster.wait_for(ProduceRequest, 2)
        cluster.unlisted.add(0)  # fenced: no longer in Metadata answers
        cluster.move_leader(TP0, 1)
        with trio.fail_after(10):
            await pending
            await producer._cluster.refresh_metadata(["t"])
        cluster.resume(0)
    asked = [node for node, _ in cluster.of_type(MetadataRequest)[asked_before:]]
    assert asked and set(asked) == {1}
