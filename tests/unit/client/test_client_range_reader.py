"""The range reader's decisions when a fetch does not simply return records (deleted records,
a truncated leader, a high watermark below the planned end), its retry budget, its move to a
new leader, and the blocking reader end to end against a fake cluster."""

from __future__ import annotations

import pytest
import trio
from client_fakes import FakeCluster, FakeClusterThread

from rillet.client import BlockingProducer, Producer
from rillet.client.blocking import BlockingRangeReader
from rillet.client.cluster import ClusterClient
from rillet.client.errors import RetriesExhaustedError
from rillet.client.range_reader import (
    RangeChunk,
    RangeGap,
    RangeRead,
    RangeReadConfig,
    RangeReader,
    RetryBudget,
)
from rillet.client.types import TopicPartition
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import FetchPartitionResponse, FetchRequest

TP = TopicPartition("t", 0)


def read(start: int = 100, end: int = 200) -> RangeRead:
    return RangeRead(TP, start, end, RangeReadConfig())


def answer(code: ErrorCode, hw: int, log_start: int, log_end: int) -> FetchPartitionResponse:
    return FetchPartitionResponse("t", 0, code, hw, log_start, b"", log_end_offset=log_end)


def test_records_deleted_by_retention_are_a_gap_up_to_the_log_start() -> None:
    r = answer(ErrorCode.OFFSET_OUT_OF_RANGE, 300, 150, 300)
    gap = read().out_of_range_gap(r, 120)
    assert (gap.start, gap.resume_at) == (120, 150)
    assert "offsets 120..149 of the planned range" in gap.reason
    gone = answer(ErrorCode.OFFSET_OUT_OF_RANGE, 300, 250, 300)
    assert read().out_of_range_gap(gone, 120).resume_at == 200  # the whole rest is gone


def test_a_leader_whose_log_ends_below_the_position_is_a_gap_to_the_end() -> None:
    r = answer(ErrorCode.OFFSET_OUT_OF_RANGE, 110, 0, 110)
    gap = read().out_of_range_gap(r, 130)
    assert (gap.start, gap.resume_at) == (130, 200)
    assert "log ends at 110, below offset 130" in gap.reason


async def test_a_truncated_log_is_a_gap_at_once() -> None:
    r = answer(ErrorCode.NONE, 150, 0, 150)
    gap = read().stall_gap(r, 150, RetryBudget(60))
    assert gap is not None and "log ends at 150, below the planned end 200" in gap.reason


async def test_a_lagging_high_watermark_is_waited_for_then_a_gap() -> None:
    r = answer(ErrorCode.NONE, 150, 0, 250)  # the records exist; the HW is catching up
    budget = RetryBudget(0.05)
    assert read().stall_gap(r, 150, budget) is None  # keep asking
    await trio.sleep(0.06)
    gap = read().stall_gap(r, 150, budget)
    assert gap is not None and "high watermark stayed at 150" in gap.reason


async def test_retriable_errors_are_retried_within_the_budget() -> None:
    budget = RetryBudget(0.2)
    await budget.failed("t-0", ConnectionError("refused"))
    budget.ok()  # progress resets the budget
    await budget.failed("t-0", ConnectionError("refused"))
    with trio.fail_after(5), pytest.raises(RetriesExhaustedError, match="retry timeout"):
        while True:
            await budget.failed("t-0", ConnectionError("refused"))


async def test_a_fetch_from_a_paused_leader_moves_to_the_new_one(nursery: trio.Nursery) -> None:
    """Issue 16: a range read stalled on a paused leader for the whole request timeout,
    although the controller had elected another. The fetch is now abandoned once the
    metadata names the new leader (the request timeout here is 30 s; the test allows 10)."""
    fake = FakeCluster(num_nodes=2)
    await fake.start(nursery)
    fake.create_topic("t", 1, leader=0)
    async with Producer(fake.bootstrap, linger_ms=0) as producer:
        for i in range(3):
            await producer.send("t", f"r{i}".encode(), partition=0)
    range_read = RangeRead(TP, 0, 3, RangeReadConfig(fetch_max_wait_ms=100))
    send, receive = trio.open_memory_channel[RangeChunk | RangeGap](10)
    async with ClusterClient(fake.bootstrap, leader_check_ms=100) as client:
        await client.refresh_metadata(["t"])
        fake.paused.add(0)

        async def elect() -> None:
            await fake.wait_for(FetchRequest, 1)
            fake.move_leader(("t", 0), 1)

        nursery.start_soon(elect)
        with trio.fail_after(10):
            await range_read.run(client, send)
        fake.resume(0)
    send.close()
    headers = []
    async for item in receive:
        assert isinstance(item, RangeChunk)
        headers += [h for _, h in item.batches]
    assert (headers[0].base_offset, headers[-1].next_offset) == (0, 3)
    assert [node for node, _ in fake.of_type(FetchRequest)][:2] == [0, 1]


async def test_the_async_reader_stops_exactly_at_the_planned_end(nursery: trio.Nursery) -> None:
    fake = FakeCluster()
    await fake.start(nursery)
    fake.create_topic("t", 1)
    async with Producer(fake.bootstrap, linger_ms=0) as producer:
        for i in range(10):
            await producer.send("t", f"r{i}".encode(), partition=0)
    spans: list[tuple[int, int]] = []
    with trio.fail_after(10):
        async with RangeReader(fake.bootstrap, TP, 2, 7, prefetch=1) as reader:
            while (item := await reader.next()) is not None:
                assert isinstance(item, RangeChunk)
                spans += [(h.base_offset, h.next_offset) for _, h in item.batches]
    # Whole batches covering [2, 7): the first holds 2, the last holds 6 and none is beyond.
    assert spans[0][0] <= 2 < spans[0][1] and spans[-1][0] < 7 <= spans[-1][1]
    with pytest.raises(ValueError, match="bad offset range"):
        RangeReader(fake.bootstrap, TP, 5, 4)


def test_the_blocking_reader_reads_a_range_in_order() -> None:
    with FakeClusterThread() as fake:
        bootstrap = fake.cluster.bootstrap
        fake.call(fake.cluster.create_topic, "t", 1)
        with BlockingProducer(bootstrap, linger_ms=0) as producer:
            for i in range(20):
                producer.send("t", f"v{i}".encode(), partition=0).result(timeout=10)
        with BlockingRangeReader(bootstrap, TP, 0, 20) as reader:
            items = list(reader)
    ends = [
        h.next_offset for item in items if isinstance(item, RangeChunk) for _, h in item.batches
    ]
    assert ends == sorted(ends) and ends[-1] == 20
