"""An idempotent producer keeps up to 5 batches of a partition in flight (the leader
remembers a producer's last 5) once the partition's leader has acknowledged one of its
batches (before that, a leader takes a producer's first batch at any sequence), and a
failure in the middle of them neither reorders, duplicates nor loses records: the batches
behind a failed one come back from the leader as OUT_OF_ORDER_SEQUENCE and go again behind
it. The fake cluster checks sequences as a node does (client_fakes._sequence_check)."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from client_fakes import FakeCluster

from rillet.client import Producer
from rillet.client.accumulator import RecordFuture
from rillet.client.errors import InvalidRecordError, OutOfOrderSequenceError
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import InitProducerIdRequest, ProduceRequest

FAST: dict[str, Any] = {
    "retry_backoff_ms": 5,
    "retry_backoff_max_ms": 20,
    "request_timeout_ms": 2000,
}
TP = ("t", 0)


VALUE = b"x" * 200  # with batch_bytes=300: one record per batch


async def five_in_flight(
    cluster: FakeCluster, producer: Producer, count: int = 5, fail_next: ErrorCode | None = None
) -> list[RecordFuture]:
    """A first record acknowledged (the leader knows the producer: the pipeline opens),
    then ``count`` one-record batches sent while the node holds every Produce, until all are
    in flight at once; ``fail_next``: the node refuses the first of them with it."""
    await (await producer.send("t", b"first", partition=0))
    if fail_next is not None:
        cluster.inject("produce", TP, fail_next)
    cluster.produce_hold = True
    futures = [await producer.send("t", VALUE + bytes([i]), partition=0) for i in range(count)]
    with trio.fail_after(5):
        while len(producer._acc.in_flight.get(TP, ())) < count:
            await trio.sleep(0.01)
    cluster.produce_hold = False
    cluster.hold.set()
    return futures


async def test_five_batches_of_a_partition_are_in_flight_at_once(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    async with Producer(cluster.bootstrap, linger_ms=0, batch_bytes=300, **FAST) as producer:
        futures = await five_in_flight(cluster, producer)
        offsets = [(await f).offset for f in futures]
    assert offsets == [1, 2, 3, 4, 5]
    assert len(cluster.of_type(ProduceRequest)) == 6


async def test_a_retried_batch_keeps_its_place_ahead_of_the_ones_behind_it(
    cluster: FakeCluster,
) -> None:
    """The first of 5 in-flight batches is refused (retriable); the node then refuses the
    other 4 as out of sequence. All 5 go again, in order, each written once."""
    cluster.create_topic("t", 1)
    async with Producer(cluster.bootstrap, linger_ms=0, batch_bytes=300, **FAST) as producer:
        futures = await five_in_flight(cluster, producer, fail_next=ErrorCode.NOT_ENOUGH_REPLICAS)
        offsets = [(await f).offset for f in futures]
    assert offsets == [1, 2, 3, 4, 5]
    assert cluster.values(TP) == [b"first"] + [VALUE + bytes([i]) for i in range(5)]
    assert len(cluster.of_type(ProduceRequest)) == 11  # the first, 5, then the same 5 again


async def test_batches_abandoned_on_a_moved_leader_go_to_the_new_one_in_order(
    nursery: trio.Nursery,
) -> None:
    """Node 0 stops answering with 5 batches in flight; the metadata names node 1. Each
    abandoned batch is put back in its place and node 1 writes them in send order."""
    cluster = FakeCluster(num_nodes=2)
    await cluster.start(nursery)
    cluster.create_topic("t", 1, leader=0)
    async with Producer(
        cluster.bootstrap, linger_ms=0, batch_bytes=300, leader_check_ms=50, **FAST
    ) as producer:
        await (await producer.send("t", b"first", partition=0))  # producer id, connection
        cluster.paused.add(0)
        futures = [await producer.send("t", VALUE + bytes([i]), partition=0) for i in range(5)]
        with trio.fail_after(5):  # the node reads one request at a time: count on our side
            while len(producer._acc.in_flight.get(TP, ())) < 5:
                await trio.sleep(0.01)
        cluster.move_leader(TP, 1)
        with trio.fail_after(10):
            offsets = [(await f).offset for f in futures]
        cluster.resume(0)
    assert offsets == [1, 2, 3, 4, 5]
    assert cluster.values(TP) == [b"first"] + [VALUE + bytes([i]) for i in range(5)]


async def test_batches_behind_a_failed_one_are_numbered_again_under_a_new_producer_id(
    cluster: FakeCluster,
) -> None:
    """The first batch fails for good (the node refuses a record), which replaces the
    producer id. The 4 behind it were refused as out of sequence, so never written: they go
    again numbered under the new id instead of failing."""
    cluster.create_topic("t", 1)
    async with Producer(cluster.bootstrap, linger_ms=0, batch_bytes=300, **FAST) as producer:
        futures = await five_in_flight(cluster, producer, fail_next=ErrorCode.INVALID_RECORD)
        with pytest.raises(InvalidRecordError):
            await futures[0]
        offsets = [(await f).offset for f in futures[1:]]
    assert offsets == [1, 2, 3, 4]
    assert cluster.values(TP) == [b"first"] + [VALUE + bytes([i]) for i in range(1, 5)]
    assert len(cluster.of_type(InitProducerIdRequest)) == 2


async def test_an_out_of_sequence_batch_with_nothing_missing_before_it_fails(
    cluster: FakeCluster,
) -> None:
    """A gap the producer cannot explain (no earlier batch outstanding, same producer id)
    is not retried forever: the batch fails."""
    cluster.create_topic("t", 1)
    cluster.inject("produce", TP, ErrorCode.OUT_OF_ORDER_SEQUENCE)
    async with Producer(cluster.bootstrap, linger_ms=0, **FAST) as producer:
        with trio.fail_after(5), pytest.raises(OutOfOrderSequenceError):
            await (await producer.send("t", b"v", partition=0))


async def test_a_refusal_read_after_the_batch_before_it_landed_is_not_a_gap(
    cluster: FakeCluster,
) -> None:
    """Two batches in flight: the node refuses the first (retriable), then the second as out
    of sequence (the first was missing when it arrived), but that refusal is slow to come
    back and is read only after the first's retry was written. The second was sent behind
    the first, so it goes again instead of failing as a gap (a chaos run saw this answer
    order, with a producer id reset and reordered records after it)."""
    cluster.create_topic("t", 1)
    cluster.late_answers.add(2)  # the second of the two (request 0 is the first record)
    async with Producer(cluster.bootstrap, linger_ms=0, batch_bytes=300, **FAST) as producer:
        futures = await five_in_flight(
            cluster, producer, count=2, fail_next=ErrorCode.NOT_ENOUGH_REPLICAS
        )
        with trio.fail_after(5):
            first = await futures[0]
            cluster.late_answers_sent.set()
            second = await futures[1]
    assert (first.offset, second.offset) == (1, 2)
    assert cluster.values(TP) == [b"first", VALUE + bytes([0]), VALUE + bytes([1])]
    assert len(cluster.of_type(InitProducerIdRequest)) == 1  # no reset


async def test_nothing_is_numbered_under_a_new_producer_id_while_an_old_batch_is_in_flight(
    cluster: FakeCluster,
) -> None:
    """The first of two batches in flight fails for good, which replaces the producer id;
    the second is refused as out of sequence but its answer is slow. A record sent now
    waits for it: numbered under the new id and sent at once, it would be written before
    the second one, which comes back refused and is numbered again behind it (the
    reordering seed 65 of the chaos sweep found)."""
    cluster.create_topic("t", 1)
    cluster.late_answers.add(2)  # the second of the two (request 0 is the first record)
    async with Producer(cluster.bootstrap, linger_ms=0, batch_bytes=300, **FAST) as producer:
        futures = await five_in_flight(
            cluster, producer, count=2, fail_next=ErrorCode.INVALID_RECORD
        )
        with pytest.raises(InvalidRecordError):
            await futures[0]
        third = await producer.send("t", VALUE + bytes([2]), partition=0)
        with trio.fail_after(5):
            await cluster.wait_for(InitProducerIdRequest, 2)
        with trio.move_on_after(0.5):  # nothing may go before the slow answer is read
            await cluster.wait_for(ProduceRequest, 4)
        cluster.late_answers_sent.set()
        with trio.fail_after(5):
            offsets = [(await futures[1]).offset, (await third).offset]
    assert offsets == [1, 2]
    assert cluster.values(TP) == [b"first", VALUE + bytes([1]), VALUE + bytes([2])]


async def test_a_partition_is_pipelined_only_once_its_leader_knows_the_producer(
    cluster: FakeCluster,
) -> None:
    """The leader takes a producer's first batch at any sequence. Were several batches of a
    new producer in flight and the first refused (retriable), the second would be written
    first ("sequence 0 after 1", seen in CI): until a batch is acknowledged, one at a time,
    then up to 5."""
    cluster.create_topic("t", 1)
    cluster.inject("produce", TP, ErrorCode.NOT_ENOUGH_REPLICAS)
    async with Producer(cluster.bootstrap, linger_ms=0, batch_bytes=300, **FAST) as producer:
        most_in_flight = 0
        futures = [await producer.send("t", VALUE + bytes([i]), partition=0) for i in range(3)]
        with trio.fail_after(5):
            while not futures[0].done():
                most_in_flight = max(most_in_flight, len(producer._acc.in_flight.get(TP, ())))
                await trio.sleep(0)
            offsets = [(await f).offset for f in futures]
        assert most_in_flight == 1
        later = await five_in_flight(cluster, producer)  # acknowledged: the pipeline opens
        assert [(await f).offset for f in later] == [4, 5, 6, 7, 8]
    assert offsets == [0, 1, 2]
    assert cluster.values(TP)[:3] == [VALUE + bytes([i]) for i in range(3)]


async def test_a_batch_that_may_be_written_is_never_numbered_again(
    cluster: FakeCluster,
) -> None:
    """Two partitions each have a batch written whose answer is slow and then says
    REQUEST_TIMED_OUT (the node appended it; its acks=all wait timed out), while five later
    batches of each are acknowledged. The retries are too old for the leader's window of 5
    (OUT_OF_ORDER_SEQUENCE): the first fails, which replaces the producer id. The other must
    fail too, its outcome unknown: numbered anew under the new id it would be written a
    second time, after later records (the duplicates of chaos disk-full seed 1)."""
    cluster.create_topic("t", 2)
    tps = [("t", 0), ("t", 1)]
    async with Producer(cluster.bootstrap, linger_ms=0, batch_bytes=300, **FAST) as producer:
        for _, p in tps:  # acknowledged: each leader knows the producer, the pipeline opens
            await (await producer.send("t", b"first", partition=p))
        cluster.late_answers.update({2, 3})
        cluster.late_error = ErrorCode.REQUEST_TIMED_OUT
        slow = []
        with trio.fail_after(5):
            for _, p in tps:
                slow.append(await producer.send("t", b"slow", partition=p))
                await cluster.wait_for(ProduceRequest, 3 + p)
            for i in range(5):
                for _, p in tps:
                    await (await producer.send("t", VALUE + bytes([i]), partition=p))
            cluster.late_answers_sent.set()
            for future in slow:
                with pytest.raises(OutOfOrderSequenceError):
                    await future
    for tp in tps:
        assert cluster.values(tp) == [b"first", b"slow"] + [VALUE + bytes([i]) for i in range(5)]
