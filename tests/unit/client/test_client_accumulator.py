"""Producer batching: batch boundaries by size and linger, shared completions, retries."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from rillet.client.accumulator import EMPTY_BATCH_BYTES, RecordAccumulator
from rillet.client.errors import BufferFullError, RilletError
from rillet.wire.batch import decode_records
from rillet.wire.compression import Compression

TP = ("t", 0)


def make(
    batch_bytes: int = 1000, linger_s: float = 0.01, closed: list[tuple[str, int]] | None = None
) -> RecordAccumulator:
    acc = RecordAccumulator(
        batch_bytes,
        linger_s,
        Compression.NONE,
        delivery_timeout_s=30,
        on_close=None if closed is None else lambda t, p: closed.append((t, p)),
    )
    acc.add_topic("t", 2)
    return acc


async def test_batches_close_before_exceeding_batch_bytes() -> None:
    closed: list[tuple[str, int]] = []
    acc = make(batch_bytes=600, closed=closed)
    futures = [acc.append("t", 0, 1, None, bytes(100), None) for _ in range(12)]
    assert all(f is not None for f in futures)
    batches = list(acc.queues[TP])
    assert [b.count for b in batches] == [4, 4, 4]  # 106 encoded bytes each, 66 of header
    assert all(b.size <= 600 for b in batches)
    assert closed == [TP, TP]  # the two full ones; the last is still open
    ready, _ = acc.ready(trio.current_time(), set())
    assert ready == [TP]
    first = acc.pop(TP)
    assert len(decode_records(first.encode())) == 4


async def test_a_record_larger_than_batch_bytes_gets_a_batch_of_its_own() -> None:
    acc = make(batch_bytes=300)
    acc.append("t", 0, 1, None, b"small", None)
    acc.append("t", 0, 1, b"k", bytes(1000), None)
    acc.append("t", 0, 1, None, b"after", None)
    assert [b.count for b in acc.queues[TP]] == [1, 1, 1]
    assert acc.queues[TP][1].size > 1000


async def test_move_if_full_lets_the_caller_pick_another_partition() -> None:
    closed: list[tuple[str, int]] = []
    acc = make(batch_bytes=300, closed=closed)
    assert acc.append("t", 0, 1, None, bytes(150), None, move_if_full=True) is not None
    assert acc.append("t", 0, 1, None, bytes(150), None, move_if_full=True) is None
    assert closed == [TP]  # the full batch was closed, nothing was appended
    assert [b.count for b in acc.queues[TP]] == [1]
    assert acc.append("t", 1, 1, None, bytes(150), None) is not None


async def test_an_idle_partition_sends_at_once() -> None:
    """Send at once when idle: a lone record pays no linger (the latency goal)."""
    acc = make(linger_s=5.0)
    acc.append("t", 0, 1, None, b"x", None)
    assert acc.ready(trio.current_time(), set())[0] == [TP]


async def test_linger_decides_when_an_open_batch_is_ready_while_busy(
    autojump_clock: trio.testing.MockClock,
) -> None:
    acc = make(linger_s=0.05)
    acc.append("t", 0, 1, None, b"x", None)
    acc.append("t", 1, 1, None, b"x", None)
    busy = acc.pop(TP)  # a batch in flight: the producer is busy, new batches linger
    acc.pop(("t", 1))
    acc.append("t", 0, 1, None, b"x", None)
    ready, wake_at = acc.ready(trio.current_time(), set())
    assert ready == [] and wake_at is not None
    await trio.sleep_until(wake_at)
    assert acc.ready(trio.current_time(), set())[0] == [TP]
    assert acc.ready(trio.current_time(), {TP})[0] == []  # muted partitions wait
    acc.append("t", 1, 1, None, b"y", None)
    assert sorted(acc.ready(trio.current_time(), set())[0]) == [TP]
    with acc.flushing():  # a flush makes everything ready at once
        assert sorted(acc.ready(trio.current_time(), set())[0]) == [TP, ("t", 1)]
    acc.release(busy)


async def test_a_partition_is_idle_again_once_its_batch_finished_or_was_put_back() -> None:
    acc = make(linger_s=5.0)
    acc.append("t", 0, 1, None, b"x", None)
    first = acc.pop(TP)
    acc.append("t", 0, 1, None, b"x", None)
    assert acc.ready(trio.current_time(), set())[0] == []  # busy: the new batch lingers
    acc.requeue(first, retry_at_s=0.0)  # a retry: back in the queue, not in flight
    assert acc.in_flight == {}
    again = acc.pop(TP)
    assert acc.in_flight == {TP: [again]}
    acc.release(again)
    acc.release(again)  # finishing twice does not count twice
    assert acc.in_flight == {}
    assert acc.ready(trio.current_time(), set())[0] == [TP]  # idle again: it goes at once
    unsent = acc.queues[TP][0]
    acc.release(unsent)  # a batch that never left (expired in its queue) was not in flight
    assert acc.in_flight == {}


async def _woken(acc: RecordAccumulator) -> bool:
    """Whether the sender's wait ends before its timeout (virtual time)."""
    started = trio.current_time()
    await acc.wait_for_work(5.0)
    return trio.current_time() - started < 5.0


async def test_new_and_closed_batches_wake_the_sender(
    autojump_clock: trio.testing.MockClock,
) -> None:
    acc = make(batch_bytes=200)
    acc.start_round()
    acc.append("t", 0, 1, None, b"x", None)
    assert await _woken(acc)  # a new batch: its linger deadline matters
    acc.start_round()
    acc.append("t", 0, 1, None, b"x", None)
    assert not await _woken(acc)  # nothing new for the sender
    acc.start_round()
    acc.append("t", 0, 1, None, bytes(150), None)
    assert await _woken(acc)


async def test_a_full_buffer_blocks_senders_until_a_batch_finishes(
    autojump_clock: trio.testing.MockClock,
) -> None:
    acc = make(batch_bytes=200)
    acc.append("t", 0, 1, None, bytes(150), None)
    full = acc.buffered_bytes
    with pytest.raises(BufferFullError):
        await acc.wait_for_space(full, 2.0, lambda: None)  # nothing finishes: it gives up
    batch = acc.pop(TP)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(acc.wait_for_space, full, 60.0, lambda: None)
        await trio.testing.wait_all_tasks_blocked()
        started = trio.current_time()
        acc.release(batch)
    assert trio.current_time() == started  # released at once, not at the timeout


async def test_futures_share_their_batch_completion() -> None:
    acc = make()
    futures = [acc.append("t", 0, 100 + i, None, b"v", None) for i in range(3)]
    batch = acc.pop(TP)
    assert futures[0] is not None and not futures[0].done()
    seen = []
    futures[0].add_done_callback(lambda f: seen.append(f.result().offset))
    batch.complete(40)
    assert seen == [40]
    assert [(await f).offset for f in futures if f is not None] == [40, 41, 42]
    assert futures[2] is not None and futures[2].result().timestamp_ms == 102
    failed = acc.append("t", 0, 1, None, b"v", None)
    assert failed is not None
    acc.pop(TP).fail(RilletError("boom"))
    assert isinstance(failed.exception(), RilletError)
    with pytest.raises(RilletError, match="boom"):
        await failed


async def test_log_append_time_replaces_the_record_timestamp() -> None:
    acc = make()
    fut = acc.append("t", 0, 5, None, b"v", None)
    acc.pop(TP).complete(0, log_append_time_ms=99)
    assert fut is not None and (await fut).timestamp_ms == 99


async def test_a_retried_batch_goes_back_to_the_front(
    autojump_clock: trio.testing.MockClock,
) -> None:
    acc = make(batch_bytes=200)
    for _ in range(4):
        acc.append("t", 0, 1, None, bytes(100), None)
    first = acc.pop(TP)
    now = trio.current_time()
    acc.requeue(first, now + 0.1)
    assert acc.ready(now, set())[0] == []  # backing off
    assert acc.ready(now + 0.2, set())[0] == [TP]
    assert acc.pop(TP) is first and first.attempts == 1
    assert first.encode() is first.encode()  # retries resend the same bytes


async def test_buffer_accounting_and_expiry(autojump_clock: trio.testing.MockClock) -> None:
    acc = make(batch_bytes=10_000)
    acc.append("t", 0, 1, None, bytes(100), None)
    acc.append("t", 1, 1, None, bytes(100), None)
    batches = acc.pending()
    assert acc.buffered_bytes == sum(b.size for b in batches) > 2 * EMPTY_BATCH_BYTES + 200
    await trio.sleep(31)
    expired = acc.expired(trio.current_time())
    assert sorted(b.partition for b in expired) == [0, 1] and acc.pending() == []
    for b in expired:
        acc.release(b)
    assert acc.buffered_bytes == 0


async def test_a_busy_producer_lingers_on_every_partition() -> None:
    """A keyless producer moving between partitions keeps full batches under load: any
    batch in flight makes new batches linger, on other partitions too."""
    acc = make(linger_s=5.0)
    acc.append("t", 0, 1, None, b"x", None)
    acc.pop(TP)
    acc.append("t", 1, 1, None, b"x", None)
    assert acc.ready(trio.current_time(), set())[0] == []
