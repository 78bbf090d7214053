"""The produce and fetch handlers, the ISR manager and the flush task, on real replicas and
real files, under trio's MockClock (``autojump_clock``): timeouts, long polls, lag windows
and flush ages pass in virtual time, with no process, socket or sleep.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio
import trio.testing
from broker_context import NODE_ID, Middle, middle

from rillet.broker.cluster.controller_call import Finished
from rillet.broker.handlers.fetch import handle_fetch
from rillet.broker.handlers.produce import handle_produce
from rillet.broker.handlers.replica_fetch import read_for_follower
from rillet.broker.replica.replication.isr_manager import IsrManager
from rillet.broker.replica.replication.leader_state import NEW_PARTITION_GRACE_LAGS
from rillet.wire.batch import build_batch
from rillet.wire.cluster_messages import AlterPartitionRequest, AlterPartitionResponse
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    ProducePartitionData,
    ProduceRequest,
    ProduceResponse,
)

FOLLOWER = 2


def _records(n: int, timestamp_ms: int) -> bytes:
    return build_batch([(timestamp_ms, None, b"v", None)] * n)


async def _produce(m: Middle, n: int, acks: int = -1, timeout_ms: int = 30_000) -> ProduceResponse:
    request = ProduceRequest(
        acks, timeout_ms, [ProducePartitionData("t", 0, _records(n, m.clock.now_ms()))]
    )
    result = handle_produce(m.ctx, request)
    if isinstance(result, ProduceResponse):
        return result
    assert result is not None
    return await result


def _follower_fetch(m: Middle, offset: int, epoch: int = 1, last_epoch: int = 1) -> Any:
    p = FetchPartition("t", 0, offset, 1 << 20, epoch, last_epoch)
    return read_for_follower(m.ctx, p, FOLLOWER, 1 << 20, first=True)


async def test_acks_all_answers_when_the_follower_fetch_moves_the_high_watermark(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    m.host("t", 0)
    answers: list[ProduceResponse] = []
    async with trio.open_nursery() as nursery:

        async def produce() -> None:
            answers.append(await _produce(m, 3))

        nursery.start_soon(produce)
        await trio.testing.wait_all_tasks_blocked()
        assert answers == []  # the follower has not fetched past the batch yet
        answer = _follower_fetch(m, 3)
        assert answer.error_code == ErrorCode.NONE and answer.high_watermark == 3
    (p,) = answers[0].partitions
    assert (p.error_code, p.base_offset) == (ErrorCode.NONE, 0)
    assert trio.current_time() < 1  # answered by the fetch, not by a timeout


async def test_acks_all_times_out_in_virtual_time(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    m.host("t", 0)
    started = trio.current_time()
    answer = await _produce(m, 1, timeout_ms=20_000)
    assert answer.partitions[0].error_code == ErrorCode.REQUEST_TIMED_OUT
    assert trio.current_time() - started >= 20  # 20 virtual seconds, no real ones


async def test_a_consumer_long_poll_wakes_on_commit_and_sees_only_committed_records(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    m.host("t", 0)
    request = FetchRequest(5_000, 1, 1 << 20, [FetchPartition("t", 0, 0, 1 << 20)])
    got: list[FetchResponse] = []
    async with trio.open_nursery() as nursery:

        async def fetch() -> None:
            got.append(await handle_fetch(m.ctx, request))

        nursery.start_soon(fetch)
        await _produce(m, 2, acks=1)
        await trio.testing.wait_all_tasks_blocked()
        assert got == []  # appended, not committed: the poll goes on
        _follower_fetch(m, 2)
    (p,) = got[0].partitions
    assert p.high_watermark == 2 and len(p.records) > 0
    assert trio.current_time() < 1
    # Nothing new: the poll ends at max_wait_ms of virtual time, empty.
    started = trio.current_time()
    empty = await handle_fetch(
        m.ctx, FetchRequest(5_000, 1, 1 << 20, [FetchPartition("t", 0, 2, 1 << 20)])
    )
    assert len(empty.partitions[0].records) == 0
    assert trio.current_time() - started >= 5


async def test_follower_fetches_are_fenced_by_epoch_and_told_where_they_diverge(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    m.host("t", 0, leader_epoch=3)
    await _produce(m, 2, acks=1)
    assert _follower_fetch(m, 0, epoch=2).error_code == ErrorCode.FENCED_LEADER_EPOCH
    assert _follower_fetch(m, 0, epoch=4).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    # The follower holds 5 records of epoch 2, which this leader's log never had: it is
    # told that epoch ends at 0 here (where this log's first epoch starts), with no records.
    diverging = _follower_fetch(m, 5, epoch=3, last_epoch=2)
    assert (diverging.diverging_epoch, diverging.diverging_end_offset) == (2, 0)
    assert len(diverging.records) == 0


class RecordingLink:
    """The controller, as the ISR manager reaches it: records each AlterPartition and
    accepts it (the partition epoch moves on), like a controller that commits at once."""

    def __init__(self) -> None:
        self.calls: list[AlterPartitionRequest] = []
        self.called = trio.Event()

    async def call(
        self, request: AlterPartitionRequest, timeout_s: float
    ) -> AlterPartitionResponse:
        self.calls.append(request)
        self.called.set()
        return AlterPartitionResponse(
            ErrorCode.NONE,
            NODE_ID,
            request.new_isr,
            request.leader_epoch,
            request.partition_epoch + 1,
        )

    async def call_outcome(
        self, request: AlterPartitionRequest, timeout_s: float
    ) -> Finished[AlterPartitionResponse]:
        """One attempt, answered: nothing unanswered before it."""
        return Finished(await self.call(request, timeout_s))


async def test_the_isr_manager_drops_a_silent_follower_after_the_lag_window(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """The partition is new (its leadership began at offset 0) and the follower never
    fetched: it may still be creating the log, so the window is NEW_PARTITION_GRACE_LAGS
    lag windows (leader_state.py)."""
    m = middle(tmp_path)
    replica = m.host("t", 0)
    await _produce(m, 1, acks=1)
    link = RecordingLink()
    manager = IsrManager(m.ctx.config, m.replicas, link, m.ctx.metadata.auth, lambda: 7)  # type: ignore[arg-type]
    window_s = NEW_PARTITION_GRACE_LAGS * m.ctx.config.replication.replica_lag_time_max_ms / 1000
    async with trio.open_nursery() as nursery:
        nursery.start_soon(manager.run)
        with trio.fail_after(window_s + 5):
            await link.called.wait()
        nursery.cancel_scope.cancel()
    assert trio.current_time() >= window_s  # not before the window passed
    (call,) = link.calls
    assert (call.new_isr, call.broker_epoch, call.partition_epoch) == ([NODE_ID], 7, 1)
    assert replica.leader is not None and replica.leader.pending is not None  # until committed


async def test_a_leader_that_hears_no_controller_drops_no_follower(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Cut off one way (it sends, receives nothing), a leader sees its followers go silent,
    but it is the one cut off: asking to drop them would leave, once the controller fences
    it, a partition with no other in-sync replica to elect (chaos sweep, one-way-in cuts).
    While its heartbeats go unanswered it proposes no removal; once they are answered, it
    does."""
    m = middle(tmp_path)
    m.host("t", 0)
    await _produce(m, 1, acks=1)
    link = RecordingLink()
    hears = False
    manager = IsrManager(
        m.ctx.config,
        m.replicas,
        link,  # type: ignore[arg-type]
        m.ctx.metadata.auth,
        lambda: 7,
        lambda: hears,
    )
    lag_s = m.ctx.config.replication.replica_lag_time_max_ms / 1000
    async with trio.open_nursery() as nursery:
        nursery.start_soon(manager.run)
        await trio.sleep(3 * lag_s)
        assert link.calls == []
        hears = True
        with trio.fail_after(5):
            await link.called.wait()
        nursery.cancel_scope.cancel()
    assert [call.new_isr for call in link.calls] == [[NODE_ID]]


async def test_with_forced_fsyncs_acks_all_waits_for_the_flush_task(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    replica = m.host("t", 0, configs={"flush.ms": "2000"})
    answers: list[ProduceResponse] = []
    answered = trio.Event()
    # The fsync runs in a worker thread, in real time: virtual time may jump only while the
    # test is idle for longer than that takes (else it would race to the produce timeout).
    autojump_clock.autojump_threshold = 0.5
    async with trio.open_nursery() as nursery:

        async def produce() -> None:
            answers.append(await _produce(m, 2))
            answered.set()

        nursery.start_soon(produce)
        await trio.testing.wait_all_tasks_blocked()
        _follower_fetch(m, 2)  # the follower has both records; the leader has not fsynced
        assert replica.high_watermark == 0 and answers == []
        nursery.start_soon(m.replicas.run_flush_task)
        with trio.fail_after(20):
            await answered.wait()
        nursery.cancel_scope.cancel()
    assert answers[0].partitions[0].error_code == ErrorCode.NONE
    assert replica.log.recovery_point == 2 and replica.high_watermark == 2
    assert trio.current_time() >= 2  # flush.ms of virtual time passed first


async def test_with_flush_messages_alone_a_short_tail_commits_at_the_next_flush_pass(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """``flush.messages`` = 8 and 2 records: no count-triggered fsync ever comes, yet the
    high watermark waits for the leader's fsync; the flush task's next pass flushes them."""
    m = middle(tmp_path)
    replica = m.host("t", 0, configs={"flush.messages": "8"})
    answers: list[ProduceResponse] = []
    answered = trio.Event()
    autojump_clock.autojump_threshold = 0.5  # the fsync runs in a thread, in real time
    async with trio.open_nursery() as nursery:

        async def produce() -> None:
            answers.append(await _produce(m, 2))
            answered.set()

        nursery.start_soon(produce)
        await trio.testing.wait_all_tasks_blocked()
        _follower_fetch(m, 2)
        assert replica.high_watermark == 0
        nursery.start_soon(m.replicas.run_flush_task)
        with trio.fail_after(20):
            await answered.wait()
        nursery.cancel_scope.cancel()
    assert answers[0].partitions[0].error_code == ErrorCode.NONE
    interval_s = m.ctx.config.tasks.flush_check_interval_ms / 1000
    assert trio.current_time() <= interval_s + 1  # one pass, not the produce timeout


async def test_acks_all_answers_each_partition_by_its_own_high_watermark(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """One Produce for two partitions: the follower copies t-1's batch, never t-0's. At the
    timeout t-0 is REQUEST_TIMED_OUT, but t-1's write was committed and is answered so (as
    Kafka's delayed produce does); a timed-out answer for a committed batch sends its
    producer into a retry the leader may no longer recognise (chaos disk-full seed 1)."""
    m = middle(tmp_path)
    m.host("t", 0)
    m.host("t", 1)
    now = m.clock.now_ms()
    request = ProduceRequest(
        -1,
        20_000,
        [ProducePartitionData("t", p, _records(2, now)) for p in (0, 1)],
    )
    answers: list[ProduceResponse] = []
    async with trio.open_nursery() as nursery:

        async def produce() -> None:
            result = handle_produce(m.ctx, request)
            assert result is not None and not isinstance(result, ProduceResponse)
            answers.append(await result)

        nursery.start_soon(produce)
        await trio.testing.wait_all_tasks_blocked()
        p1 = FetchPartition("t", 1, 2, 1 << 20, 1, 1)
        assert read_for_follower(m.ctx, p1, FOLLOWER, 1 << 20, first=True).high_watermark == 2
    codes = {p.partition: p.error_code for p in answers[0].partitions}
    assert codes == {0: ErrorCode.REQUEST_TIMED_OUT, 1: ErrorCode.NONE}
