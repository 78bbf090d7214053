"""A leader cut off from the controller and from its in-sync followers stops taking writes
(broker/replica/replication/stranded_leaders.py), under trio's MockClock on real replicas.

The chaos side-by-side run's partition row: a leader cut off one way (it sends, hears
nothing) kept its Kafka clients for the whole cut, although the controller had moved its
partitions after the broker session: nothing told the clients to look elsewhere, and their
writes waited for a high watermark that could not move.
"""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from broker_context import Middle, middle

from rillet.broker.handlers.metadata import handle_metadata
from rillet.broker.handlers.produce import handle_produce
from rillet.broker.replica.replication.leader_state import NEW_PARTITION_GRACE_LAGS
from rillet.broker.replica.replication.stranded_leaders import StrandedLeaderWatch, is_stranded
from rillet.metadata_quorum.records import PartitionRecord, TopicRecord
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    MetadataRequest,
    PartitionMetadata,
    ProducePartitionData,
    ProduceRequest,
    ProduceResponse,
)

INTERVAL_MS = 200


async def _produce(m: Middle, acks: int = -1) -> ProduceResponse:
    records = build_batch([(m.clock.now_ms(), None, b"v", None)])
    result = handle_produce(
        m.ctx, ProduceRequest(acks, 120_000, [ProducePartitionData("t", 0, records)])
    )
    if isinstance(result, ProduceResponse):
        return result
    assert result is not None
    return await result


def _watch(m: Middle, hears: list[bool]) -> StrandedLeaderWatch:
    lag_ms = m.ctx.config.replication.replica_lag_time_max_ms
    return StrandedLeaderWatch(m.replicas, lag_ms, INTERVAL_MS, lambda: True, lambda: hears[0])


def _past_lag_window_s(m: Middle) -> float:
    """Past the window in which a silent follower of a new partition keeps its ISR place."""
    lag_s = m.ctx.config.replication.replica_lag_time_max_ms / 1000
    return NEW_PARTITION_GRACE_LAGS * lag_s + 1


async def test_a_deaf_leader_with_a_silent_follower_refuses_writes_and_ends_waits(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    replica = m.host("t", 0)
    hears = [False]
    watch = _watch(m, hears)
    answers: list[ProduceResponse] = []
    async with trio.open_nursery() as nursery:

        async def produce() -> None:
            answers.append(await _produce(m))

        nursery.start_soon(produce)
        nursery.start_soon(watch.run)
        with trio.fail_after(_past_lag_window_s(m) + 2):
            while not answers:
                await trio.sleep(0.1)
        # Well before the 120 s request timeout: ended when the leader found itself cut off.
        assert trio.current_time() < _past_lag_window_s(m) + 1
        assert replica.stranded and watch.stranded == 1
        (waited,) = answers[0].partitions
        assert waited.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        for acks in (-1, 1):
            (refused,) = (await _produce(m, acks)).partitions
            assert refused.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
            assert "hears neither the controller" in (refused.error_message or "")
        hears[0] = True  # heartbeats answered again: it takes writes at the next pass
        await trio.sleep(2 * INTERVAL_MS / 1000)
        assert not replica.stranded and watch.stranded == 0
        (taken,) = (await _produce(m, acks=1)).partitions
        assert taken.error_code == ErrorCode.NONE
        nursery.cancel_scope.cancel()


async def test_a_leader_that_hears_the_controller_or_whose_followers_fetch_is_not_stranded(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    replica = m.host("t", 0)
    lag_ms = m.ctx.config.replication.replica_lag_time_max_ms
    assert not is_stranded(replica, m.clock.steady_ms(), lag_ms, hears_controller=False)
    await trio.sleep(_past_lag_window_s(m))
    now = m.clock.steady_ms()
    assert is_stranded(replica, now, lag_ms, hears_controller=False)
    assert not is_stranded(replica, now, lag_ms, hears_controller=True)  # it can shrink the ISR
    follower = m.host("t", 1, leader=2)
    assert not is_stranded(follower, now, lag_ms, hears_controller=False)  # leads nothing


async def test_a_leader_alone_in_its_isr_is_never_stranded(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """A controller failover with no follower lagging stops no writes."""
    m = middle(tmp_path)
    replica = m.host("t", 0, isr=(1,), replicas=(1,))
    watch = _watch(m, [False])
    await trio.sleep(_past_lag_window_s(m))
    watch.check()
    assert not replica.stranded
    (taken,) = (await _produce(m, acks=-1)).partitions
    assert taken.error_code == ErrorCode.NONE


async def test_a_wait_that_begins_after_the_leader_is_stranded_ends_at_once(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """A produce request waits for its partitions one after another: the second
    partition's wait begins after the first's ended, when both leaders are already cut off
    (the chaos run's answers came only when the cut healed)."""
    m = middle(tmp_path)
    replica = m.host("t", 0)
    await _produce(m, acks=1)
    await trio.sleep(_past_lag_window_s(m))
    _watch(m, [False]).check()
    assert replica.stranded
    with trio.fail_after(1):
        assert not await replica.wait_for_high_watermark(replica.log.log_end_offset, 1)


async def test_metadata_names_a_healed_leader_again_at_once(tmp_path: Path) -> None:
    """The watch's map is rebuilt every pass, but the committed state that clears a
    replica's flag may arrive between two passes: Metadata must name the leader from then."""
    m = middle(tmp_path)
    m.ctx.metadata.state.apply_entry(
        1,
        [PartitionRecord("tid-t", 0, [1, 2], [1, 2], 1, 1), TopicRecord("t", "tid-t", {})],  # type: ignore[list-item]
    )
    replica = m.host("t", 0)
    replica.set_stranded(True)  # what a pass of the watch does
    m.replicas.stranded = {"t": frozenset({0})}

    def partition() -> PartitionMetadata:
        (topic,) = handle_metadata(m.ctx, MetadataRequest(["t"])).topics
        (p,) = topic.partitions
        return p

    cut = partition()
    assert (cut.leader_id, cut.error_code) == (-1, ErrorCode.LEADER_NOT_AVAILABLE)
    assert replica.role is not None
    replica.set_role(replica.role, m.clock.now_ms())  # committed state reached it
    healed = partition()
    assert (healed.leader_id, healed.error_code) == (1, ErrorCode.NONE)
