"""A Produce request for many partitions is appended in slices that yield to the event
loop (broker/handlers/in_order.py), and its connection still handles requests in order:
a batch pipelined behind the request lands after the request's batches."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.lowlevel
import trio.testing
from broker_context import EPOCH_MS, middle
from test_connection_under_mock_clock import receive, send, served

import rillet.broker.handlers.produce as produce_handler
from rillet.broker.dispatcher import Dispatcher
from rillet.broker.session import Session
from rillet.wire.api import ApiKey
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FrameDecoder
from rillet.wire.messages import ProducePartitionData, ProduceRequest, ProduceResponse
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
    monkeypatch.setattr(produce_handler, "SLICE_PARTITIONS", 2)


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
