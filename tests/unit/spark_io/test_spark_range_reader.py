"""The read task's decisions when a fetch does not simply return records: deleted records,
a truncated leader, a high watermark below the planned end (waited for, then data loss)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from rillet.client import Producer
from rillet.client.cluster import ClusterClient
from rillet.spark_io.errors import DataLossError, FetchFailedError
from rillet.spark_io.range_reader import RangeFetcher, RangeTask, _Progress
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import FetchPartitionResponse, FetchRequest


def fetcher(fail_on_data_loss: bool = True) -> RangeFetcher:
    return RangeFetcher(RangeTask("h:1", "t", 0, 100, 200, fail_on_data_loss=fail_on_data_loss))


def answer(code: ErrorCode, hw: int, log_start: int, log_end: int) -> FetchPartitionResponse:
    return FetchPartitionResponse("t", 0, code, hw, log_start, b"", log_end_offset=log_end)


def test_records_deleted_by_retention() -> None:
    r = answer(ErrorCode.OFFSET_OUT_OF_RANGE, 300, 150, 300)
    with pytest.raises(DataLossError, match=r"offsets 120\.\.149 of the planned range"):
        fetcher()._out_of_range(r, 120)
    lenient = fetcher(fail_on_data_loss=False)
    assert lenient._out_of_range(r, 120) == 150  # reading goes on at the log start
    assert "skipped up to offset 150" in lenient.warnings[0]
    gone = answer(ErrorCode.OFFSET_OUT_OF_RANGE, 300, 250, 300)
    assert fetcher(False)._out_of_range(gone, 120) == 200  # the whole rest is gone


def test_a_leader_whose_log_ends_below_the_position() -> None:
    r = answer(ErrorCode.OFFSET_OUT_OF_RANGE, 110, 0, 110)
    with pytest.raises(DataLossError, match="log ends at 110, below offset 130"):
        fetcher()._out_of_range(r, 130)
    assert fetcher(False)._out_of_range(r, 130) == 200


async def test_a_truncated_log_is_data_loss_at_once() -> None:
    r = answer(ErrorCode.NONE, 150, 0, 150)
    with pytest.raises(DataLossError, match="log ends at 150, below the planned end 200"):
        fetcher()._check_stall(r, 150, _Progress(60))


async def test_a_lagging_high_watermark_is_waited_for_then_data_loss() -> None:
    r = answer(ErrorCode.NONE, 150, 0, 250)  # the records exist; the HW is catching up
    progress = _Progress(0.05)
    assert fetcher()._check_stall(r, 150, progress) == 150  # keep asking
    await trio.sleep(0.06)
    with pytest.raises(DataLossError, match="high watermark stayed at 150"):
        fetcher()._check_stall(r, 150, progress)


async def test_retriable_errors_are_retried_within_the_budget() -> None:
    progress = _Progress(0.2)
    await progress.failed("t-0", ConnectionError("refused"))
    progress.ok()  # progress resets the budget
    await progress.failed("t-0", ConnectionError("refused"))
    with trio.fail_after(5), pytest.raises(FetchFailedError, match="retryTimeoutMs"):
        while True:
            await progress.failed("t-0", ConnectionError("refused"))


async def test_a_fetch_from_a_paused_leader_moves_to_the_new_one(nursery: trio.Nursery) -> None:
    """Issue 16: a range read stalled on a paused leader for the whole request timeout,
    although the controller had elected another. The fetch is now abandoned once the
    metadata names the new leader (the request timeout here is 30 s; the test allows 10)."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "client"))
    from client_fakes import FakeCluster

    fake = FakeCluster(num_nodes=2)
    await fake.start(nursery)
    fake.create_topic("t", 1, leader=0)
    async with Producer(fake.bootstrap, linger_ms=0) as producer:
        for i in range(3):
            await producer.send("t", f"r{i}".encode(), partition=0)
    task = RangeTask(fake.bootstrap, "t", 0, 0, 3, fetch_max_wait_ms=100)
    send, receive = trio.open_memory_channel[Any](10)
    async with ClusterClient(fake.bootstrap, leader_check_ms=100) as client:
        await client.refresh_metadata(["t"])
        fake.paused.add(0)

        async def elect() -> None:
            await fake.wait_for(FetchRequest, 1)
            fake.move_leader(("t", 0), 1)

        nursery.start_soon(elect)
        with trio.fail_after(10):
            await RangeFetcher(task)._fetch_range(client, send)
        fake.resume(0)
    send.close()
    headers: list[Any] = []
    async for chunk in receive:
        headers += [h for _, h in chunk.batches]
    assert (headers[0].base_offset, headers[-1].next_offset) == (0, 3)
    assert [node for node, _ in fake.of_type(FetchRequest)][:2] == [0, 1]
