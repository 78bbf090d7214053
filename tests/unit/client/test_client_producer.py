"""The producer against the fake cluster: acks, batching, retries, timeouts, ordering."""

from __future__ import annotations

import random
from typing import Any

import pytest
import trio
from client_fakes import FakeCluster

from rillet.client import Producer, RecordMetadata
from rillet.client.errors import (
    BufferFullError,
    ClientClosedError,
    ClientTimeoutError,
    MessageTooLargeError,
    NotEnoughReplicasError,
    UnknownTopicOrPartitionError,
)
from rillet.client.partitioner import partition_for_key
from rillet.wire.batch import decode_records
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import MetadataRequest, ProduceRequest

FAST: dict[str, Any] = {
    "retry_backoff_ms": 5,
    "retry_backoff_max_ms": 20,
    "request_timeout_ms": 2000,
}


async def test_records_are_acknowledged_with_their_offsets(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 3)
    async with Producer(cluster.bootstrap, acks="all", linger_ms=1, **FAST) as producer:
        keyed = [await producer.send("t", f"v{i}".encode(), key=b"user-1") for i in range(5)]
        placed = await producer.send(
            "t", b"h", partition=2, headers=[("trace", b"1")], timestamp_ms=1234
        )
        mds = [await f for f in keyed]
        expected = partition_for_key(b"user-1", 3)
        assert [md.partition for md in mds] == [expected] * 5
        assert [md.offset for md in mds] == [0, 1, 2, 3, 4]
        assert await placed == RecordMetadata("t", 2, 0 if expected != 2 else 5, 1234)
    assert cluster.values(("t", expected))[:5] == [f"v{i}".encode() for i in range(5)]
    (record,) = [r for b in cluster.logs[("t", 2)].batches for r in decode_records(b)][-1:]
    assert (record.headers, record.timestamp_ms) == ([("trace", b"1")], 1234)


async def test_linger_gathers_records_into_one_request(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    async with Producer(cluster.bootstrap, linger_ms=100, **FAST) as producer:
        futures = [await producer.send("t", b"x", partition=0) for _ in range(10)]
        await futures[-1]
    ((_, request),) = cluster.of_type(ProduceRequest)
    assert len(request.partitions) == 1 and len(cluster.logs[("t", 0)].batches) == 1


async def test_send_counts_tell_requests_and_batches(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 3)
    async with Producer(cluster.bootstrap, linger_ms=100, **FAST) as producer:
        assert tuple(producer.send_counts()) == (0, 0)
        futures = [await producer.send("t", b"x", partition=i % 3) for i in range(9)]
        await futures[-1]
        counts = producer.send_counts()
    requests = cluster.of_type(ProduceRequest)
    assert counts.requests == len(requests) >= 1
    assert counts.batches == sum(len(r.partitions) for _, r in requests) >= 3


async def test_full_batches_are_sent_without_waiting_for_linger(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    async with Producer(cluster.bootstrap, linger_ms=60_000, batch_bytes=1024, **FAST) as p:
        futures = [await p.send("t", bytes(100), partition=0) for _ in range(30)]
        with trio.fail_after(5):
            await futures[20]  # in a full batch: sent long before a minute
    batches = cluster.logs[("t", 0)].batches
    assert len(batches) >= 3 and all(len(b) <= 1024 for b in batches)


async def test_batches_close_at_the_topics_max_message_bytes(cluster: FakeCluster) -> None:
    """A topic whose ``max.message.bytes`` is below ``batch_bytes`` gets batches its
    leader takes (the broker refuses a larger one whole)."""
    cluster.create_topic("small", 1, configs={"max.message.bytes": "2000"})
    cluster.create_topic("big", 1)
    async with Producer(cluster.bootstrap, linger_ms=60_000, batch_bytes=64 * 1024, **FAST) as p:
        for _ in range(60):
            await p.send("small", bytes(100), partition=0)
            await p.send("big", bytes(100), partition=0)
        await p.flush()
    small = cluster.logs[("small", 0)].batches
    assert len(small) >= 3 and all(len(b) <= 2000 for b in small)
    assert len(cluster.logs[("big", 0)].batches) == 1  # the producer's own limit elsewhere


async def test_batches_close_at_the_nodes_max_batch_bytes(cluster: FakeCluster) -> None:
    """Nodes whose ``max_batch_bytes`` is below the producer's ``batch_bytes`` say so in
    their metadata answers; a topic's own ``max.message.bytes`` still wins, also above it."""
    cluster.max_batch_bytes = 3000
    cluster.create_topic("plain", 1)
    cluster.create_topic("own", 1, configs={"max.message.bytes": "100000"})
    async with Producer(cluster.bootstrap, linger_ms=60_000, batch_bytes=64 * 1024, **FAST) as p:
        for _ in range(60):
            await p.send("plain", bytes(100), partition=0)
            await p.send("own", bytes(100), partition=0)
        await p.flush()
        with pytest.raises(MessageTooLargeError, match="the nodes' max_batch_bytes"):
            await p.send("plain", bytes(70_000), partition=0)
    plain = cluster.logs[("plain", 0)].batches
    assert len(plain) >= 2 and all(len(b) <= 3000 for b in plain)
    assert len(cluster.logs[("own", 0)].batches) == 1


async def test_sticky_partitioning_fills_batches_and_moves_on(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 4)
    async with Producer(
        cluster.bootstrap, linger_ms=1000, batch_bytes=2048, rng=random.Random(3), **FAST
    ) as producer:
        for _ in range(200):
            await producer.send("t", bytes(50))
        await producer.flush()
    counts = [len(cluster.logs[("t", p)].batches) for p in range(4)]
    assert sum(counts) >= 5 and sum(1 for c in counts if c) > 1
    records = [len(decode_records(b)) for p in range(4) for b in cluster.logs[("t", p)].batches]
    assert sum(records) == 200 and sorted(records)[-2] > 20  # full batches, not crumbs


async def test_not_leader_refreshes_metadata_and_retries_on_the_new_leader(
    cluster: FakeCluster,
) -> None:
    cluster.create_topic("t", 1, leader=0)
    async with Producer(cluster.bootstrap, linger_ms=0, **FAST) as producer:
        await (await producer.send("t", b"before"))
        cluster.move_leader(("t", 0), 1)  # the producer's metadata is now stale
        refreshes = len(cluster.of_type(MetadataRequest))
        md = await (await producer.send("t", b"after"))
    assert md.offset == 1 and cluster.values(("t", 0)) == [b"before", b"after"]
    nodes = [node for node, _ in cluster.of_type(ProduceRequest)]
    assert nodes == [0, 0, 1]
    assert len(cluster.of_type(MetadataRequest)) > refreshes


async def test_non_retriable_errors_fail_the_batch(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    cluster.inject("produce", ("t", 0), ErrorCode.MESSAGE_TOO_LARGE)
    async with Producer(cluster.bootstrap, linger_ms=0, **FAST) as producer:
        with pytest.raises(MessageTooLargeError):
            await (await producer.send("t", b"big"))
        assert (await (await producer.send("t", b"next"))).offset == 0


async def test_retries_and_delivery_timeout_bound_every_batch(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    cluster.inject("produce", ("t", 0), *[ErrorCode.NOT_ENOUGH_REPLICAS] * 3)
    async with Producer(cluster.bootstrap, linger_ms=0, retries=2, **FAST) as producer:
        with pytest.raises(NotEnoughReplicasError):
            await (await producer.send("t", b"x"))
    assert len(cluster.of_type(ProduceRequest)) == 3  # the first try and two retries
    cluster.inject("produce", ("t", 0), *[ErrorCode.NOT_ENOUGH_REPLICAS] * 1000)
    async with Producer(
        cluster.bootstrap, linger_ms=0, delivery_timeout_ms=200, **FAST
    ) as producer:
        with trio.fail_after(5), pytest.raises(ClientTimeoutError, match="delivery_timeout"):
            await (await producer.send("t", b"y"))


async def test_retries_keep_order_with_one_request_in_flight(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    cluster.inject("produce", ("t", 0), ErrorCode.REQUEST_TIMED_OUT, ErrorCode.REQUEST_TIMED_OUT)
    async with Producer(
        cluster.bootstrap, linger_ms=0, batch_bytes=300, max_in_flight=1, **FAST
    ) as producer:
        futures = [await producer.send("t", f"{i:03}".encode() * 20) for i in range(20)]
        offsets = [(await f).offset for f in futures]
    assert offsets == list(range(20))
    assert cluster.values(("t", 0)) == [f"{i:03}".encode() * 20 for i in range(20)]


async def test_acks_zero_completes_without_answers(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    async with Producer(cluster.bootstrap, acks=0, linger_ms=0, **FAST) as producer:
        mds = [await (await producer.send("t", f"{i}".encode())) for i in range(3)]
    assert [md.offset for md in mds] == [-1, -1, -1]
    with trio.fail_after(5):
        while len(cluster.values(("t", 0))) < 3:
            await cluster.appended.wait()
    assert all(r.acks == 0 for _, r in cluster.of_type(ProduceRequest))


async def test_unknown_topic_and_bad_partition_fail_fast(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 2)
    async with Producer(cluster.bootstrap, delivery_timeout_ms=300, **FAST) as producer:
        with trio.fail_after(5), pytest.raises(UnknownTopicOrPartitionError):
            await producer.send("missing", b"x")
        with pytest.raises(UnknownTopicOrPartitionError):
            await producer.send("t", b"x", partition=2)
        assert await producer.partitions_for("t") == [0, 1]


async def test_a_full_buffer_blocks_then_fails(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    cluster.produce_hold = True  # nothing is ever acknowledged
    async with Producer(
        cluster.bootstrap, linger_ms=0, buffer_bytes=2000, max_block_ms=100, **FAST
    ) as producer:
        with trio.fail_after(5), pytest.raises(BufferFullError):
            for _ in range(100):
                await producer.send("t", bytes(100))
        cluster.produce_hold = False
        cluster.hold.set()
        await producer.flush()


async def test_flush_close_and_use_after_close(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    producer = Producer(cluster.bootstrap, linger_ms=60_000, **FAST)
    async with producer:
        futures = [await producer.send("t", b"v") for _ in range(5)]
        await producer.flush()
        assert all(f.done() for f in futures)
        last = await producer.send("t", b"last")
    assert (await last).offset == 5  # leaving the block flushed it
    with pytest.raises(ClientClosedError):
        await producer.send("t", b"late")


async def test_an_exception_in_the_block_leaves_as_itself(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    with pytest.raises(KeyError):
        async with Producer(cluster.bootstrap, **FAST) as producer:
            pending = await producer.send("t", b"v")
            raise KeyError("mine")
    with pytest.raises(ClientClosedError):
        await pending  # not flushed: the block failed


async def test_the_send_micro_benchmark_still_runs() -> None:
    from send_microbench import measure

    result = await measure(5_000)
    assert set(result) >= {"unkeyed (sticky)", "keyed (10k distinct keys)"}
    assert all(us > 0 for us in result.values())


async def test_backpressure_keeps_batches_full(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    async with Producer(
        cluster.bootstrap, linger_ms=5000, batch_bytes=1000, buffer_bytes=2500, **FAST
    ) as producer:
        with trio.fail_after(5):
            for _ in range(100):
                await producer.send("t", bytes(100), partition=0)
            await producer.flush()
    sizes = [len(decode_records(b)) for b in cluster.logs[("t", 0)].batches]
    assert sum(sizes) == 100 and min(sizes[:-1]) == max(sizes), str(sizes)  # only the last is short


async def test_a_record_of_the_wrong_type_is_refused_cleanly(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    async with Producer(cluster.bootstrap, linger_ms=0, **FAST) as producer:
        with pytest.raises(TypeError):
            await producer.send("t", "not bytes", partition=0)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await producer.send("t", b"v", key="not bytes", partition=0)  # type: ignore[arg-type]
        assert (await (await producer.send("t", b"fine", partition=0))).offset == 0
    assert cluster.values(("t", 0)) == [b"fine"]


async def test_requests_in_flight_keep_the_send_order(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    async with Producer(
        cluster.bootstrap, linger_ms=0, batch_bytes=300, max_in_flight=5, **FAST
    ) as producer:
        for i in range(300):
            await producer.send("t", f"{i:05}".encode(), partition=0)
    assert cluster.values(("t", 0)) == [f"{i:05}".encode() for i in range(300)]
    assert len(cluster.of_type(ProduceRequest)) > 10


async def test_a_request_cut_by_a_metadata_refresh_is_retried_on_the_new_leader(
    cluster: FakeCluster,
) -> None:
    """Chaos seed 6 (second sweep): a refresh that no longer listed the leader's broker (it was
    fenced while cut off) closed the connection to it, and 418 in-flight records failed with
    ClientClosedError. Kafka's producer retries such batches; so does ours."""
    cluster.create_topic("t", 1, leader=0)
    async with Producer(cluster.bootstrap, linger_ms=0, **FAST) as producer:
        await (await producer.send("t", b"before"))
        cluster.produce_hold = True  # node 0 holds the next request unanswered
        pending = await producer.send("t", b"during")
        await cluster.wait_for(ProduceRequest, 2)
        cluster.unlisted.add(0)
        cluster.move_leader(("t", 0), 1)
        cluster.produce_hold = False
        await producer._cluster.refresh_metadata(["t"])  # closes the connection to node 0
        with trio.fail_after(5):
            md = await pending
        cluster.hold.set()  # let node 0's held request end
    assert md.partition == 0
    assert [node for node, _ in cluster.of_type(ProduceRequest)][-1] == 1


async def test_a_record_no_request_can_carry_is_refused_before_sending(
    cluster: FakeCluster,
) -> None:
    """Issue 16: a 120 MB record looped on connection resets (larger than a node's frame
    limit) instead of failing with MessageTooLargeError."""
    cluster.create_topic("big", 1)
    async with Producer(cluster.bootstrap, max_request_bytes=1 << 20, linger_ms=0) as producer:
        with pytest.raises(MessageTooLargeError, match="max_request_bytes"):
            await producer.send("big", b"x" * (1 << 20))
        ok = await producer.send("big", b"y" * (512 * 1024))
        assert (await ok).offset == 0
    assert len(cluster.of_type(ProduceRequest)) == 1  # the big one never left the client
