"""A Produce request for many partitions is appended in slices that yield to the event
loop (broker/handlers/in_order.py), and its connection still handles requests in order:
a batch pipelined behind the request lands after the request's batches. A fetch naming
many partitions is read in slices too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
import trio.lowlevel
import trio.testing
from broker_context import EPOCH_MS, NODE_ID, middle
from test_connection_under_mock_clock import receive, send, served

import rillet.broker.handlers.fetch as fetch_handler
import rillet.broker.handlers.produce as produce_handler
from rillet.broker.dispatcher import Dispatcher
from rillet.broker.handlers.fetch import handle_fetch
from rillet.broker.handlers.in_order import InOrder
from rillet.broker.handlers.produce import handle_produce
from rillet.broker.runtime import loop_slices
from rillet.broker.security.session import Session
from rillet.wire.api import ApiKey
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FrameDecoder, blob_length
from rillet.wire.messages import (
    FetchPartition,
    FetchRequest,
    ProducePartitionData,
    ProduceRequest,
    ProduceResponse,
)
from rillet.wire.protocol import PROTOCOL_VERSION, RequestHeader

PARTITIONS = 5
PID = 11


def _data(partition: int, sequence: int) -> ProducePartitionData:
    records = build_batch(
        [(EPOCH_MS, None, b"v", None)], producer_id=PID, producer_epoch=0, base_sequence=sequence
    )
    return ProducePartitionData("t", partition, records)


@pytest.fixture(autouse=True)
def _small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices of two partitions (the clock cannot be relied on to cut them)."""
    monkeypatch.setattr(produce_handler, "SLICE_PARTITIONS", 2)
    monkeypatch.setattr(produce_handler, "JUDGE_PARTITIONS", 2)
    monkeypatch.setattr(loop_slices, "SLICE_S", 0.0)


async def test_other_tasks_run_between_the_slices(tmp_path: Path) -> None:
    m = middle(tmp_path)
    for partition in range(PARTITIONS):
        m.host("t", partition)
    request = ProduceRequest(1, 30_000, [_data(p, 0) for p in range(PARTITIONS)])
    header = RequestHeader(ApiKey.PRODUCE, PROTOCOL_VERSION, 1, "test")
    reply = Dispatcher(m.ctx).dispatch(header, request, Session("native", "127.0.0.1"))
    assert reply is not None and reply.in_order is not None
    seen: list[int] = []

    async def watch() -> None:
        while True:
            seen.append(sum(m.replicas.get("t", p).log.log_end_offset for p in range(PARTITIONS)))  # type: ignore[union-attr]
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch)
        await trio.lowlevel.checkpoint()  # the watcher starts
        await reply.settle()
        nursery.cancel_scope.cancel()
    assert isinstance(reply.message, ProduceResponse)
    assert [p.error_code for p in reply.message.partitions] == [ErrorCode.NONE] * PARTITIONS
    assert {2, 4} & set(seen)  # the watcher ran while the request was half appended


async def test_a_request_pipelined_behind_a_sliced_one_is_appended_after_it(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    for partition in range(PARTITIONS):
        m.host("t", partition)
    decoder = FrameDecoder()
    last = PARTITIONS - 1
    async with served(m) as client:
        await send(client, 1, ProduceRequest(1, 30_000, [_data(p, 0) for p in range(PARTITIONS)]))
        await send(client, 2, ProduceRequest(1, 30_000, [_data(last, 1)]))
        first = await receive(client, decoder, ProduceResponse)
        second = await receive(client, decoder, ProduceResponse)
    assert [p.error_code for p in first.partitions] == [ErrorCode.NONE] * PARTITIONS
    (behind,) = second.partitions
    assert (behind.error_code, behind.base_offset) == (ErrorCode.NONE, 1)


async def test_a_fetch_of_many_partitions_yields_between_slices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read of a fetch naming many partitions lets other tasks run between slices, and
    answers every partition."""
    monkeypatch.setattr(fetch_handler, "READ_SLICE_PARTITIONS", 2)
    m = middle(tmp_path)
    for partition in range(PARTITIONS):
        m.host("t", partition, isr=(NODE_ID,), replicas=(NODE_ID,))
    written = handle_produce(m.ctx, ProduceRequest(1, 30_000, [_data(p, 0) for p in range(3)]))
    assert isinstance(written, InOrder)  # three partitions: two slices
    assert isinstance(await written.work, ProduceResponse)
    request = FetchRequest(
        0, 1, 1 << 20, [FetchPartition("t", p, 0, 1 << 20) for p in range(PARTITIONS)]
    )
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(tick)
        await trio.lowlevel.checkpoint()
        started = ticks
        response = await handle_fetch(m.ctx, request)
        nursery.cancel_scope.cancel()
    assert ticks > started  # it ran while the read yielded between slices
    assert [blob_length(r.records) > 0 for r in response.partitions] == [True] * 3 + [False] * 2


async def test_an_append_during_a_sliced_read_wakes_the_long_poll(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, autojump_clock: trio.testing.MockClock
) -> None:
    """A record appended to a partition the read already passed (between two slices) wakes
    the fetch's long poll: it is answered at once, not when the poll times out."""
    monkeypatch.setattr(fetch_handler, "READ_SLICE_PARTITIONS", 2)
    read = fetch_handler._read_partition
    reads = 0

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal reads
        reads += 1
        return read(*args, **kwargs)

    monkeypatch.setattr(fetch_handler, "_read_partition", counted)
    m = middle(tmp_path)
    for partition in range(PARTITIONS):
        m.host("t", partition, isr=(NODE_ID,), replicas=(NODE_ID,))
    request = FetchRequest(
        10_000, 1, 1 << 20, [FetchPartition("t", p, 0, 1 << 20) for p in range(PARTITIONS)]
    )

    async def append_after_the_first_slice() -> None:
        while reads < 2:
            await trio.lowlevel.checkpoint()
        handle_produce(m.ctx, ProduceRequest(1, 30_000, [_data(0, 0)]))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(append_after_the_first_slice)
        response = await handle_fetch(m.ctx, request)
    assert trio.current_time() < 1  # not the 10 s poll
    assert blob_length(response.partitions[0].records) > 0


async def test_a_long_polls_waiters_are_registered_in_slices_and_released_when_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fetch of many partitions registers its long-poll wake-ups between slices of loop
    time (a follower's session names thousands), and a fetch cancelled midway leaves no
    wake-up registered on any partition."""
    monkeypatch.setattr(fetch_handler, "READ_SLICE_PARTITIONS", 2)
    m = middle(tmp_path)
    replicas = [
        m.host("t", partition, isr=(NODE_ID,), replicas=(NODE_ID,))
        for partition in range(PARTITIONS)
    ]
    request = FetchRequest(
        10_000, 1, 1 << 20, [FetchPartition("t", p, 0, 1 << 20) for p in range(PARTITIONS)]
    )
    registered_at_turns: list[int] = []

    async def watch(scope: trio.CancelScope) -> None:
        # trio may run the two tasks of a scheduler round in either order, so one look
        # can see one or two more registrations than the last: cancel at the first look
        # past one, which is still part-way through five.
        while True:
            registered_at_turns.append(sum(len(r._waiters) for r in replicas))
            if registered_at_turns[-1] >= 2:
                scope.cancel()  # the connection went away mid-registration
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        with trio.CancelScope() as fetch_scope:
            nursery.start_soon(watch, fetch_scope)
            await trio.lowlevel.checkpoint()
            await handle_fetch(m.ctx, request)
        nursery.cancel_scope.cancel()
    # seen part-way: registration yielded between partitions
    assert any(1 < n < PARTITIONS for n in registered_at_turns)
    assert all(not r._waiters and not r._follower_waiters for r in replicas)
