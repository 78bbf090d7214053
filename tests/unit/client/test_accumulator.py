"""Producer batching: when batches close, futures, and retries keep their place."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from rillet.client.accumulator import RecordAccumulator
from rillet.client.errors import RilletError
from rillet.wire.batch import decode_records
from rillet.wire.compression import Compression

TP = ("t", 0)


def make(batch_bytes: int = 1000, linger_s: float = 0.01) -> RecordAccumulator:
    return RecordAccumulator(batch_bytes, linger_s, Compression.NONE, delivery_timeout_s=30)


async def test_batch_closes_by_size() -> None:
    acc = make(batch_bytes=500)
    fulls = []
    for _ in range(20):
        _, full, _ = acc.append(TP, 1, None, bytes(100), None)
        fulls.append(full)
    assert fulls.index(True) == 4  # five 100-byte records (plus framing) reach 500 bytes
    ready, _ = acc.ready_partitions(trio.current_time())
    assert ready == [TP]
    batch = acc.pop(TP)
    assert len(decode_records(batch.encode())) == 5


async def test_linger_decides_when_a_partial_batch_is_ready(
    autojump_clock: trio.testing.MockClock,
) -> None:
    acc = make(linger_s=0.05)
    _, _, opened = acc.append(TP, 1, None, b"x", None)
    assert opened
    ready, deadline = acc.ready_partitions(trio.current_time())
    assert ready == [] and deadline is not None
    await trio.sleep_until(deadline)
    ready, _ = acc.ready_partitions(trio.current_time())
    assert ready == [TP]
    acc.flushing += 1  # flush makes everything ready at once
    acc.append(("t", 1), 1, None, b"y", None)
    assert sorted(acc.ready_partitions(trio.current_time())[0]) == [TP, ("t", 1)]


async def test_futures_resolve_with_offsets_or_errors() -> None:
    acc = make()
    futures = [acc.append(TP, 100 + i, None, b"v", None)[0] for i in range(3)]
    batch = acc.pop(TP)
    assert not futures[0].done()
    batch.complete(40)
    assert [(await f).offset for f in futures] == [40, 41, 42]
    assert futures[2].result().timestamp_ms == 102
    failed = acc.append(TP, 1, None, b"v", None)[0]
    acc.pop(TP).fail(RilletError("boom"))
    with pytest.raises(RilletError, match="boom"):
        await failed


async def test_a_retried_batch_goes_back_to_the_front(
    autojump_clock: trio.testing.MockClock,
) -> None:
    acc = make(batch_bytes=150)
    for _ in range(4):
        acc.append(TP, 1, None, bytes(100), None)
    first = acc.pop(TP)
    now = trio.current_time()
    acc.requeue(first, now + 0.1)
    assert acc.ready_partitions(now)[0] == []  # backing off
    assert acc.ready_partitions(now + 0.2)[0] == [TP]
    assert acc.pop(TP) is first and first.attempts == 1
