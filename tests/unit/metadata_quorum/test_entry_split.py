"""Large controller decisions become bounded Raft entries whose every prefix is safe: a
topic appears with all its partitions at once, a fence never precedes the moves it implies,
and a creation cut short by a lost leadership is cleaned up by the next controller."""

from __future__ import annotations

import random

import pytest
import trio
import trio.testing
from sim_quorum import SimCluster

from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.controller_service import ControllerService
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.entry_split import split_records
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.records import (
    FenceBroker,
    PartitionChange,
    PartitionRecord,
    RegisterBroker,
    RemoveTopic,
    TopicRecord,
    decode_entry,
)
from rillet.metadata_quorum.state import MetadataState


def apply_all(state: MetadataState, decision: Decision) -> None:
    assert decision.error == 0, decision.message
    state.apply_entry(state.last_applied_index + 1, decision.records)


def three_brokers() -> tuple[Controller, MetadataState]:
    ctl = Controller(ControllerConfig(), random.Random(3))
    state = MetadataState()
    for b in (1, 2, 3):
        apply_all(state, ctl.register_broker(state, RegisterBroker(b, f"i{b}", "h", b), 0))
        apply_all(state, ctl.heartbeat(state, b, state.brokers[b].broker_epoch, True, 0))
    return ctl, state


def test_split_records_keeps_order_and_bounds_each_entry() -> None:
    records = [RemoveTopic(str(i)) for i in range(2_501)]
    entries = split_records(records, 1_000)
    assert [len(e) for e in entries] == [1_000, 1_000, 501]
    assert [r for e in entries for r in e] == records
    assert split_records(records[:3], 1_000) == [records[:3]]
    with pytest.raises(ValueError):
        split_records(records, 0)


def test_a_split_topic_appears_with_all_its_partitions_at_once() -> None:
    ctl, state = three_brokers()
    decision = ctl.create_topic(state, "big", 2_500, 3, {})
    assert isinstance(decision.records[-1], TopicRecord)
    assert all(isinstance(r, PartitionRecord) for r in decision.records[:-1])
    entries = split_records(decision.records, 1_000)
    state.drain_changed_partitions()
    for entry in entries[:-1]:
        state.apply_entry(state.last_applied_index + 1, entry)
        assert state.topic_by_name("big") is None  # pending: invisible
    changed_before_topic = state.drain_changed_partitions()
    state.apply_entry(state.last_applied_index + 1, entries[-1])
    topic = state.topic_by_name("big")
    assert topic is not None and len(state.partitions_of(topic.topic_id)) == 2_500
    # The topic's arrival reports every partition again, also those drained before it.
    assert len(changed_before_topic) == 2_000
    assert len(state.drain_changed_partitions()) == 2_500


def test_the_next_controller_removes_a_creation_cut_short() -> None:
    ctl, state = three_brokers()
    decision = ctl.create_topic(state, "big", 2_500, 3, {})
    for entry in split_records(decision.records, 1_000)[:2]:  # the third never committed
        state.apply_entry(state.last_applied_index + 1, entry)
    assert state.pending_topic_ids() and state.topic_by_name("big") is None
    successor = Controller(ControllerConfig(), random.Random(4))
    successor.on_become_leader(state, 0)
    cleanup = successor.tick(state, 0)
    assert all(isinstance(r, RemoveTopic) for r in cleanup.records) and cleanup.records
    apply_all(state, cleanup)
    assert not state.partitions and not state.pending_topic_ids()
    ok = successor.create_topic(state, "big", 3, 3, {})  # the name is free
    apply_all(state, ok)
    assert state.topic_by_name("big") is not None


def test_moves_come_before_the_fence_they_follow_from() -> None:
    ctl, state = three_brokers()
    apply_all(state, ctl.create_topic(state, "t", 30, 3, {}))
    broker = state.brokers[2]
    decision = ctl.controlled_shutdown(state, 2, broker.broker_epoch)
    kinds = [type(r) for r in decision.records]
    assert kinds[-1] is FenceBroker and set(kinds[:-1]) == {PartitionChange}
    timed_out = ctl.tick(state, 10**9)  # every lease expired
    fences = [i for i, r in enumerate(timed_out.records) if isinstance(r, FenceBroker)]
    moves = [i for i, r in enumerate(timed_out.records) if isinstance(r, PartitionChange)]
    assert fences and moves and max(moves) < min(fences)


async def test_the_service_commits_a_large_decision_as_bounded_entries(
    autojump_clock: trio.testing.MockClock,
) -> None:
    cluster = SimCluster([1], random.Random(5))
    quorum = cluster.members[1]
    follower = MetadataFollower(quorum)
    config = ControllerConfig(60_000, max_records_per_batch=100)
    service = ControllerService(
        quorum, follower, config, random.Random(5), lambda: int(trio.current_time() * 1000)
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(follower.run)
        nursery.start_soon(service.run)
        await trio.sleep(0.1)
        for b in (1, 2, 3):
            await service.submit(
                lambda c, s, n, b=b: c.register_broker(s, RegisterBroker(b, f"i{b}", "h", b), n)
            )
            await service.submit(
                lambda c, s, n, b=b: c.heartbeat(s, b, s.brokers[b].broker_epoch, True, n)
            )
        before = len(cluster.log)
        await service.submit(lambda c, s, n: c.create_topic(s, "big", 250, 3, {}))
        sizes = [len(decode_entry(e.data)) for e in cluster.log[before:]]
        assert sizes == [100, 100, 51]
        topic = follower.state.topic_by_name("big")
        assert topic is not None and len(follower.state.partitions_of(topic.topic_id)) == 250
        nursery.cancel_scope.cancel()
