"""Controller decisions on the in-memory quorum: registration, leases, elections from the ISR,
topic placement, AlterPartition checks, and a controller change mid-action."""

from __future__ import annotations

import random

import pytest
import trio
import trio.testing
from sim_quorum import SimCluster

from rillet.metadata_quorum.assignment import assign_replicas
from rillet.metadata_quorum.broker_leases import HeardAnswer
from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.records import (
    NO_LEADER,
    PartitionChange,
    RegisterBroker,
    UnfenceBroker,
    decode_record,
    encode_record,
)
from rillet.metadata_quorum.state import MetadataState
from rillet.metadata_quorum.topic_requests import TopicRequestLog
from rillet.raft.errors import ProposalOutcomeUnknown
from rillet.raft.quorum import Quorum
from rillet.wire.error_codes import ErrorCode

TIMEOUT_MS = 9000


def apply_all(state: MetadataState, decision: Decision) -> None:
    for record in decision.records:
        state.apply(state.last_applied_index + 1, record)


def cluster_of(brokers: dict[int, str | None]) -> tuple[Controller, MetadataState]:
    ctl = Controller(ControllerConfig(TIMEOUT_MS), random.Random(1))
    state = MetadataState()
    for b, rack in brokers.items():
        apply_all(state, ctl.register_broker(state, RegisterBroker(b, f"inc{b}", "h", b, rack), 0))
        apply_all(state, ctl.heartbeat(state, b, state.brokers[b].broker_epoch, True, 0))
    return ctl, state


def test_rack_aware_assignment_spreads_replicas_and_leaders() -> None:
    brokers = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
    plan = assign_replicas(brokers, 12, 3, random.Random(5))
    for replicas in plan:
        assert len(set(replicas)) == 3
        assert len({brokers[r] for r in replicas}) == 3  # one replica per rack
    leaders = [r[0] for r in plan]
    assert {leaders.count(b) for b in brokers} == {2}  # leadership evenly spread


def test_registration_is_idempotent_and_heartbeats_unfence() -> None:
    ctl, state = cluster_of({1: None})
    again = ctl.register_broker(state, RegisterBroker(1, "inc1", "h", 1), 10)
    assert again.records == []
    bad = ctl.heartbeat(state, 1, 999, True, 10)
    assert bad.error == ErrorCode.UNKNOWN_MEMBER_ID
    assert state.unfenced_brokers() == [1]


def test_create_topic_refuses_too_few_brokers_and_duplicates() -> None:
    ctl, state = cluster_of({1: None, 2: None})
    assert ctl.create_topic(state, "t", 3, 3, {}).error == ErrorCode.INVALID_REPLICATION_FACTOR
    ok = ctl.create_topic(state, "t", 3, 2, {})
    apply_all(state, ok)
    topic = state.topic_by_name("t")
    assert topic is not None and len(state.partitions_of(topic.topic_id)) == 3
    assert ctl.create_topic(state, "t", 1, 1, {}).error == ErrorCode.TOPIC_ALREADY_EXISTS


def test_expired_lease_fences_and_elects_from_the_isr_only() -> None:
    ctl, state = cluster_of({1: None, 2: None, 3: None})
    apply_all(state, ctl.create_topic(state, "t", 6, 3, {}))
    apply_all(state, ctl.create_topic(state, "solo", 1, 1, {}))
    solo = state.topic_by_name("solo")
    assert solo is not None
    solo_leader = state.partitions[(solo.topic_id, 0)].leader
    for b in (1, 2, 3):
        if b != solo_leader:
            ctl.heartbeat(state, b, state.brokers[b].broker_epoch, True, TIMEOUT_MS - 1)
    assert ctl.tick(state, TIMEOUT_MS - 1).records == []
    apply_all(state, ctl.tick(state, TIMEOUT_MS))
    assert state.brokers[solo_leader].fenced
    for (topic_id, _), p in state.partitions.items():
        if topic_id == solo.topic_id:
            # its only replica is gone: no leader, and it stays the (last) ISR member
            assert p.leader == NO_LEADER and p.isr == (solo_leader,)
        else:
            assert p.leader != solo_leader and p.leader in p.isr
            assert solo_leader not in p.isr


def test_unclean_election_only_when_the_topic_allows_it() -> None:
    ctl, state = cluster_of({1: None, 2: None})
    apply_all(
        state, ctl.create_topic(state, "dirty", 1, 2, {"unclean.leader.election.enable": "true"})
    )
    topic = state.topic_by_name("dirty")
    assert topic is not None
    key = (topic.topic_id, 0)
    p = state.partitions[key]
    follower = next(r for r in p.replicas if r != p.leader)
    apply_all(
        state,
        ctl.alter_partition(state, *key, p.leader, p.leader_epoch, p.partition_epoch, [p.leader]),
    )
    old_leader = p.leader
    ctl.heartbeat(state, follower, state.brokers[follower].broker_epoch, True, TIMEOUT_MS)
    apply_all(state, ctl.tick(state, TIMEOUT_MS + 1))
    assert state.partitions[key].leader == follower  # out-of-sync replica elected: allowed
    assert state.brokers[old_leader].fenced


def test_alter_partition_is_checked_against_epochs() -> None:
    ctl, state = cluster_of({1: None, 2: None, 3: None})
    apply_all(state, ctl.create_topic(state, "t", 1, 3, {}))
    topic = state.topic_by_name("t")
    assert topic is not None
    key = (topic.topic_id, 0)
    p = state.partitions[key]
    shrink = [p.leader, p.replicas[1]]
    stale = ctl.alter_partition(
        state, *key, p.leader, p.leader_epoch, p.partition_epoch - 1, shrink
    )
    assert stale.error == ErrorCode.INVALID_REQUEST
    wrong = ctl.alter_partition(
        state, *key, p.replicas[1], p.leader_epoch, p.partition_epoch, shrink
    )
    assert wrong.error == ErrorCode.FENCED_LEADER_EPOCH
    ok = ctl.alter_partition(state, *key, p.leader, p.leader_epoch, p.partition_epoch, shrink)
    apply_all(state, ok)
    assert state.partitions[key].isr == tuple(sorted(shrink))
    assert state.partitions[key].partition_epoch == p.partition_epoch + 1


def test_preferred_leader_returns_when_in_sync() -> None:
    ctl, state = cluster_of({1: None, 2: None})
    apply_all(state, ctl.create_topic(state, "t", 1, 2, {}))
    topic = state.topic_by_name("t")
    assert topic is not None
    key = (topic.topic_id, 0)
    preferred = state.partitions[key].replicas[0]
    other = state.partitions[key].replicas[1]
    ctl.heartbeat(state, other, state.brokers[other].broker_epoch, True, TIMEOUT_MS)
    apply_all(state, ctl.tick(state, TIMEOUT_MS + 1))
    assert state.partitions[key].leader == other
    # the preferred broker restarts (new epoch), catches up, rejoins the ISR
    apply_all(
        state,
        ctl.register_broker(state, RegisterBroker(preferred, "again", "h", 1), TIMEOUT_MS + 2),
    )
    epoch = state.brokers[preferred].broker_epoch
    apply_all(state, ctl.heartbeat(state, preferred, epoch, True, TIMEOUT_MS + 3))
    p = state.partitions[key]
    apply_all(
        state,
        ctl.alter_partition(
            state, *key, p.leader, p.leader_epoch, p.partition_epoch, [other, preferred]
        ),
    )
    apply_all(state, ctl.preferred_leaders(state))
    assert state.partitions[key].leader == preferred


async def drive(quorum: Quorum, state: MetadataState, decision: Decision) -> None:
    """What the controller driver does: propose each record, then apply the committed log
    (also when a proposal's outcome is unknown: the log is the truth)."""
    try:
        for record in decision.records:
            await quorum.propose(encode_record(record))
    finally:
        if quorum.commit_index() > state.last_applied_index:
            for entry in await quorum.read_committed(state.last_applied_index, 10_000):
                state.apply(entry.index, decode_record(entry.data))


@pytest.mark.parametrize("seed", range(20))
def test_controller_change_in_the_middle_of_fencing_converges(seed: int) -> None:
    async def main() -> None:
        cluster = SimCluster([1, 2, 3], random.Random(seed), commit_delay_s=0.01)
        q1, q2 = cluster.member(1), cluster.member(2)
        ctl1 = Controller(ControllerConfig(TIMEOUT_MS), random.Random(seed))
        state1 = MetadataState()
        for b in (1, 2, 3):
            await drive(
                q1, state1, ctl1.register_broker(state1, RegisterBroker(b, f"i{b}", "h", b), 0)
            )
            await drive(
                q1, state1, ctl1.heartbeat(state1, b, state1.brokers[b].broker_epoch, True, 0)
            )
        await drive(q1, state1, ctl1.create_topic(state1, "t", 8, 3, {}))
        for b in (2, 3):
            ctl1.heartbeat(state1, b, state1.brokers[b].broker_epoch, True, TIMEOUT_MS - 1)
        # broker 1's lease expires: fence it and move its partitions ... and lose leadership
        # while those records are in flight.
        decision = ctl1.tick(state1, TIMEOUT_MS)
        assert len(decision.records) > 1
        async with trio.open_nursery() as nursery:

            async def fence() -> None:
                try:
                    await drive(q1, state1, decision)
                except ProposalOutcomeUnknown:
                    pass

            nursery.start_soon(fence)
            await trio.sleep(0.015)
            cluster.elect(2)
        # The new controller rebuilds its state from the log and carries on.
        state2 = MetadataState()
        await drive(q2, state2, Decision([]))
        ctl2 = Controller(ControllerConfig(TIMEOUT_MS), random.Random(seed + 1))
        ctl2.on_become_leader(state2, TIMEOUT_MS)
        for b in (2, 3):
            ctl2.heartbeat(state2, b, state2.brokers[b].broker_epoch, True, 2 * TIMEOUT_MS - 1)
        await drive(q2, state2, ctl2.tick(state2, 2 * TIMEOUT_MS))
        assert state2.brokers[1].fenced
        for p in state2.partitions.values():
            assert p.leader in (2, 3) and p.leader in p.isr and 1 not in p.isr
        # every member derives the same state
        state3 = MetadataState()
        await drive(cluster.member(3), state3, Decision([]))
        assert state3.to_snapshot() == state2.to_snapshot()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_controlled_shutdown_fences_at_once_and_moves_leaderships_within_the_isr() -> None:
    ctl, state = cluster_of({1: None, 2: None, 3: None})
    apply_all(state, ctl.create_topic(state, "t", 6, 3, {}))
    apply_all(state, ctl.create_topic(state, "solo", 3, 1, {}))
    epoch = state.brokers[2].broker_epoch
    assert ctl.controlled_shutdown(state, 2, epoch + 1).error == ErrorCode.UNKNOWN_MEMBER_ID
    apply_all(state, ctl.controlled_shutdown(state, 2, epoch))
    assert state.brokers[2].fenced
    for p in state.partitions.values():
        if len(p.replicas) == 3:
            assert p.leader in (1, 3) and 2 not in p.isr and p.leader in p.isr
        elif p.replicas == (2,):
            # The sole replica stays in the ISR (it holds every committed record); no leader
            # until it comes back, since unclean election is off.
            assert p.leader == NO_LEADER and p.isr == (2,)
    # Back with a new incarnation: fenced until caught up, then leads its solo partitions again.
    apply_all(state, ctl.register_broker(state, RegisterBroker(2, "inc2-b", "h", 2), 5))
    apply_all(state, ctl.heartbeat(state, 2, state.brokers[2].broker_epoch, True, 5))
    assert not state.leaderless_partitions()


def test_delete_topic_removes_it_and_unknown_names_are_refused() -> None:
    ctl, state = cluster_of({1: None})
    apply_all(state, ctl.create_topic(state, "gone", 2, 1, {}))
    apply_all(state, ctl.delete_topic(state, "gone"))
    assert state.topic_by_name("gone") is None and not state.partitions
    assert ctl.delete_topic(state, "gone").error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_leadership_returns_to_the_preferred_replica_once_it_is_back_in_sync() -> None:
    _, state = cluster_of({1: None, 2: None, 3: None})
    config = ControllerConfig(
        TIMEOUT_MS, leader_rebalance_interval_ms=1000, new_controller_grace_ms=TIMEOUT_MS
    )
    ctl = Controller(config, random.Random(1))
    ctl.on_become_leader(state, 0)  # the first check is due one interval after this
    apply_all(state, ctl.create_topic(state, "t", 3, 3, {}))
    topic = state.topic_by_name("t")
    assert topic is not None
    moved = [
        (topic.topic_id, p)
        for p, s in state.partitions_of(topic.topic_id).items()
        if s.leader == s.replicas[0]
    ]
    apply_all(state, ctl.controlled_shutdown(state, 1, state.brokers[1].broker_epoch))
    away = {k: s for k, s in state.partitions.items() if s.replicas[0] == 1}
    assert away and all(s.leader != 1 and 1 not in s.isr for s in away.values())
    apply_all(state, ctl.register_broker(state, RegisterBroker(1, "inc1b", "h", 1), 100))
    apply_all(state, ctl.heartbeat(state, 1, state.brokers[1].broker_epoch, True, 100))
    interval = ctl.config.leader_rebalance_interval_ms
    assert ctl.tick(state, interval - 1).records == []  # not yet due
    assert ctl.tick(state, interval).records == []  # due, but broker 1 is not in sync yet
    for key, s in away.items():  # its leaders let it back into the ISR once caught up
        apply_all(
            state,
            ctl.alter_partition(
                state, key[0], key[1], s.leader, s.leader_epoch, s.partition_epoch, [*s.isr, 1]
            ),
        )
    apply_all(state, ctl.tick(state, 2 * interval))
    assert all(state.partitions[k].leader == 1 for k in away)
    assert all(state.partitions[k].leader == state.partitions[k].replicas[0] for k in moved)


def test_a_lost_heartbeat_connection_expires_the_lease_after_a_grace() -> None:
    ctl, state = cluster_of({1: None, 2: None})
    grace = ctl.config.connection_lost_grace_ms
    ctl.connection_lost(state, 2, state.brokers[2].broker_epoch, 1000)
    ctl.connection_lost(state, 1, 999, 1000)  # a stale epoch changes nothing
    assert ctl.tick(state, 1000 + grace - 1).records == []
    apply_all(state, ctl.tick(state, 1000 + grace))
    assert state.brokers[2].fenced and not state.brokers[1].fenced


def test_a_heartbeat_after_a_lost_connection_keeps_the_broker() -> None:
    ctl, state = cluster_of({1: None})
    ctl.connection_lost(state, 1, state.brokers[1].broker_epoch, 1000)
    ctl.heartbeat(state, 1, state.brokers[1].broker_epoch, True, 1100)  # it reconnected
    assert ctl.tick(state, 1000 + ctl.config.connection_lost_grace_ms).records == []


def test_smoke_seed_3_a_heartbeat_renews_the_lease_when_it_arrives() -> None:
    """Chaos smoke seed 3 (under CI load): a new controller fenced every broker at once —
    none had been seen within its grace — and a restarted broker with a damaged log tail
    then became the partitions' only ISR member and leader. A heartbeat now renews the lease
    when it reaches the controller, before its decision waits behind other commits, and the
    new controller's default grace is 3 s."""
    ctl, state = cluster_of({1: None, 2: None, 3: None})
    assert ControllerConfig(TIMEOUT_MS).new_controller_grace_ms == 3000
    ctl.on_become_leader(state, 0)  # deadlines: the grace, 3 s
    ctl.heartbeat_arrived(state, 1, state.brokers[1].broker_epoch, 2_500)
    ctl.heartbeat_arrived(state, 2, state.brokers[2].broker_epoch, 2_900)
    ctl.heartbeat_arrived(state, 3, 12345, 2_900)  # a stale epoch renews nothing
    decision = ctl.tick(state, 3_100)  # their decisions have not run yet
    fenced = {r.broker_id for r in decision.records if type(r).__name__ == "FenceBroker"}
    assert fenced == {3}


def test_seed_65_a_restarted_broker_never_leads_as_its_previous_incarnation() -> None:
    """Chaos seed 65: a leader was killed with a damaged log tail and restarted before the
    controller (itself new, within its grace) had fenced it. Caught up to its registration,
    its metadata still named it leader with the old epoch: the followers truncated committed
    records to its shorter log and consumers reset to offset 0. Leadership and ISR now move
    off a new incarnation in the same Raft entry as its registration."""
    ctl, state = cluster_of({1: None, 2: None, 3: None})
    apply_all(state, ctl.create_topic(state, "t", 6, 3, {}))
    led_by_3 = {k for k, p in state.partitions.items() if p.leader == 3}
    assert led_by_3
    decision = ctl.register_broker(state, RegisterBroker(3, "inc3-restarted", "h", 3), 100)
    # One decision is one Raft entry: the broker's epoch is the index of all of it.
    state.apply_entry(state.last_applied_index + 1, decision.records)
    assert state.brokers[3].broker_epoch == state.last_applied_index
    assert state.brokers[3].fenced
    for key, p in state.partitions.items():
        assert p.leader != 3 and 3 not in p.isr
        if key in led_by_3:
            assert p.leader in (1, 2)
    # Once caught up it is unfenced and rejoins the ISRs through its leaders, as any follower.
    apply_all(state, ctl.heartbeat(state, 3, state.brokers[3].broker_epoch, True, 200))
    assert not state.brokers[3].fenced
    assert all(p.leader != 3 for p in state.partitions.values())


# -- retried admin requests (issue 16) ------------------------------------------------------


def _applied(state: MetadataState, decision: Decision) -> None:
    if decision.records:
        state.apply_entry(state.last_applied_index + 1, decision.records)


def test_a_retried_create_or_delete_succeeds_also_under_a_new_controller() -> None:
    """The answer to a create was lost with its controller; the client resends the same
    request (same id) to the next controller, which must say NONE, not TOPIC_ALREADY_EXISTS
    about the client's own topic. Likewise for delete. The memory is in the metadata state,
    so it survives a controller change and a snapshot."""
    state = MetadataState()
    for b in (1, 2):
        state.apply_entry(state.last_applied_index + 1, [RegisterBroker(b, f"i{b}", "h", b)])
        state.apply_entry(
            state.last_applied_index + 1, [UnfenceBroker(b, state.brokers[b].broker_epoch)]
        )
    first = Controller(ControllerConfig(), random.Random(1))
    _applied(state, first.create_topic(state, "t", 2, 2, {}, "req-1"))
    _applied(state, first.create_topic(state, "gone", 1, 1, {}, "req-2"))
    _applied(state, first.delete_topic(state, "gone", "req-3"))

    restored = MetadataState.from_snapshot(state.to_snapshot())
    second = Controller(ControllerConfig(), random.Random(2))
    for s in (state, restored):
        retried = second.create_topic(s, "t", 2, 2, {}, "req-1")
        assert (retried.error, retried.records) == (ErrorCode.NONE, [])
        deleted_again = second.delete_topic(s, "gone", "req-3")
        assert (deleted_again.error, deleted_again.records) == (ErrorCode.NONE, [])
        # another request for the same topic is still told the truth
        assert (
            second.create_topic(s, "t", 2, 2, {}, "req-9").error == ErrorCode.TOPIC_ALREADY_EXISTS
        )
        assert second.create_topic(s, "t", 2, 2, {}).error == ErrorCode.TOPIC_ALREADY_EXISTS
        assert second.delete_topic(s, "gone", "req-9").error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert restored.to_snapshot() == state.to_snapshot()


def test_remembered_topic_requests_are_bounded_oldest_first() -> None:
    log = TopicRequestLog(capacity=3)
    for i in range(5):
        log.note(f"r{i}", "t")
    log.note("", "t")  # requests without an id are not remembered
    assert len(log) == 3
    assert not log.done("r1", "t") and log.done("r2", "t") and log.done("r4", "t")
    assert not log.done("r4", "other") and not log.done("", "t")
    assert TopicRequestLog.from_doc(log.to_doc()).to_doc() == log.to_doc()


def test_a_damaged_replica_leaves_the_isr_and_a_damaged_leader_hands_over() -> None:
    ctl, state = cluster_of({1: None, 2: None, 3: None})
    apply_all(state, ctl.create_topic(state, "t", 1, 3, {}))
    topic = state.topic_by_name("t")
    assert topic is not None
    key = (topic.topic_id, 0)
    p = state.partitions[key]
    leader, follower, third = p.replicas[0], p.replicas[1], p.replicas[2]
    assert p.leader == leader
    # A follower may remove itself, and only itself.
    others = sorted(r for r in p.isr if r != follower)
    wrong = ctl.alter_partition(state, *key, follower, p.leader_epoch, p.partition_epoch, [leader])
    assert wrong.error == ErrorCode.INVALID_REQUEST
    apply_all(
        state, ctl.alter_partition(state, *key, follower, p.leader_epoch, p.partition_epoch, others)
    )
    p = state.partitions[key]
    assert (p.leader, sorted(p.isr)) == (leader, others)
    # The leader gives up: another live in-sync replica leads, in a new epoch.
    remaining = [third]
    apply_all(
        state,
        ctl.alter_partition(state, *key, leader, p.leader_epoch, p.partition_epoch, remaining),
    )
    q = state.partitions[key]
    assert (q.leader, list(q.isr)) == (third, [third])
    assert q.leader_epoch == p.leader_epoch + 1
    # The last in-sync replica is never removed: its copy is the only complete one.
    refused = ctl.alter_partition(state, *key, third, q.leader_epoch, q.partition_epoch, [])
    assert refused.error == ErrorCode.NOT_ENOUGH_REPLICAS
    assert refused.records == []


def test_a_new_controller_ends_the_lease_of_a_silent_broker_whose_listener_refuses() -> None:
    """Issue 21: a node that was controller and partition leader is killed; the new
    controller's grace kept its partitions leaderless for 3 s. A refused connection to its
    listener proves no process serves there, so its lease ends at once."""
    ctl, state = cluster_of({1: None, 2: None, 3: None})
    apply_all(state, ctl.create_topic(state, "t", 6, 3, {}))
    ctl.on_become_leader(state, 0)
    assert ctl.awaiting_first_heartbeat(state, 0) == [1, 2, 3]
    ctl.heartbeat_arrived(state, 1, state.brokers[1].broker_epoch, 10)
    ctl.heartbeat_arrived(state, 2, state.brokers[2].broker_epoch, 10)
    assert ctl.awaiting_first_heartbeat(state, 20) == [3]
    ctl.listener_refused(state, 3, 999, 20)  # a stale epoch changes nothing
    assert ctl.tick(state, 30).records == []
    ctl.listener_refused(state, 3, state.brokers[3].broker_epoch, 40)
    decision = ctl.tick(state, 40)
    fenced = {r.broker_id for r in decision.records if type(r).__name__ == "FenceBroker"}
    assert fenced == {3}
    apply_all(state, decision)
    assert len(state.partitions) == 6
    assert all(p.leader != 3 and 3 not in p.isr for p in state.partitions.values())
    assert ctl.awaiting_first_heartbeat(state, 50) == []  # fenced: nothing left to probe


def test_the_grace_ends_the_probing_of_brokers_that_never_answered() -> None:
    ctl, state = cluster_of({1: None, 2: None})
    ctl.on_become_leader(state, 0)
    grace = ctl.config.new_controller_grace_ms
    assert ctl.awaiting_first_heartbeat(state, grace - 1) == [1, 2]
    assert ctl.awaiting_first_heartbeat(state, grace) == []


def test_create_partitions_only_grows_a_topic_and_keeps_its_replication_factor() -> None:
    ctl, state = cluster_of({1: None, 2: None, 3: None})
    apply_all(state, ctl.create_topic(state, "t", 2, 2, {}))
    topic_id = state.topic_by_name("t").topic_id  # type: ignore[union-attr]
    assert ctl.create_partitions(state, "nope", 3).error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    for count in (1, 2):  # fewer or the same: Kafka's INVALID_PARTITIONS
        refused = ctl.create_partitions(state, "t", count)
        assert refused.error == ErrorCode.INVALID_PARTITIONS and not refused.records
    assert ctl.create_partitions(state, "t", 5, validate_only=True).records == []
    assert len(state.partitions_of(topic_id)) == 2
    decision = ctl.create_partitions(state, "t", 5)
    assert decision.error == ErrorCode.NONE
    apply_all(state, decision)
    grown = state.partitions_of(topic_id)
    assert sorted(grown) == [0, 1, 2, 3, 4]
    for p in (2, 3, 4):
        assert len(grown[p].replicas) == 2 and grown[p].leader == grown[p].replicas[0]
        assert grown[p].isr == grown[p].replicas


def test_altering_topic_configs_replaces_the_overrides_and_a_resend_commits_nothing() -> None:
    ctl, state = cluster_of({1: None})
    apply_all(state, ctl.create_topic(state, "t", 1, 1, {"retention.ms": "5"}))
    before = state.topic_by_name("t")
    assert ctl.alter_topic_configs(state, "x", {}).error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    decision = ctl.alter_topic_configs(state, "t", {"segment.bytes": "1048576"})
    apply_all(state, decision)
    after = state.topic_by_name("t")
    assert after is not None and after is not before  # readers see a new object
    assert after.configs == {"segment.bytes": "1048576"}
    assert ctl.alter_topic_configs(state, "t", {"segment.bytes": "1048576"}).records == []
    assert state.drain_changed_partitions() >= {(after.topic_id, 0)}


def test_a_new_controller_counts_a_silent_brokers_session_from_the_lost_leader() -> None:
    """Chaos sweep, pauses of the Raft leader: the new controller waited its whole grace
    after its activation, so the paused node's partitions stalled the election plus 3 s
    (5.59 s at most). A broker silent since the previous leader went quiet has had its
    session running since then: its lease now ends a session after that moment, but never
    before live brokers had the re-announce window to find the new controller."""
    config = ControllerConfig(3_000, new_controller_grace_ms=3_000, reannounce_window_ms=1_000)

    def fenced_at(activation_ms: int, last_contact_ms: int | None) -> int:
        ctl, state = cluster_of({1: None, 2: None, 3: None})
        ctl.config = config
        ctl.on_become_leader(state, activation_ms, last_contact_ms)
        for b in (2, 3):  # the live brokers re-announce at once
            ctl.heartbeat(state, b, state.brokers[b].broker_epoch, True, activation_ms + 50)
        for now in range(activation_ms, activation_ms + 10_000, 10):
            decision = ctl.tick(state, now)
            if any(type(r).__name__ == "FenceBroker" for r in decision.records):
                return now - activation_ms
        raise AssertionError("never fenced")

    assert fenced_at(10_000, None) == 3_000  # unknown: the whole grace, as before
    assert fenced_at(10_000, 9_200) == 2_200  # a session after the last contact
    assert fenced_at(10_000, 5_000) == 1_000  # long silent: the re-announce window still


def test_a_broker_that_reaches_the_controller_but_hears_nothing_back_is_fenced() -> None:
    """A one-way cut (chaos sweep, `partition` mode one-way-in): the broker's heartbeats
    keep arriving but it receives no answer, so it echoes the same old one. Its lease ends
    a session (plus a heartbeat interval) after that answer, as if it were silent; a broker
    that hears its answers keeps its lease; a deaf broker is not unfenced."""
    ctl, state = cluster_of({1: None, 2: None})
    ctl.on_become_leader(state, 0)
    interval = ctl.config.broker_heartbeat_interval_ms
    key = ctl.answer_key
    heard = {1: HeardAnswer(0, -1), 2: HeardAnswer(0, -1)}  # nothing heard yet
    for now in range(interval, 3 * TIMEOUT_MS, interval):
        for b in (1, 2):
            ctl.heartbeat_arrived(state, b, state.brokers[b].broker_epoch, now, heard[b])
            ctl.answered(b, now)  # the answer, stamped now
        heard[1] = HeardAnswer(key, now)  # broker 1 hears every answer...
        if now == interval:
            heard[2] = HeardAnswer(key, now)  # ...broker 2 only the first
        apply_all(state, ctl.tick(state, now))
        if state.brokers[2].fenced:
            break
    assert now == interval + TIMEOUT_MS + interval  # a session and an interval after it
    assert not state.brokers[1].fenced
    epoch = state.brokers[2].broker_epoch
    assert ctl.heartbeat(state, 2, epoch, True, now + 1, heard[2]).records == []  # still deaf
    back = ctl.heartbeat(state, 2, epoch, True, now + 2, HeardAnswer(key, now + 1))
    assert any(isinstance(r, UnfenceBroker) for r in back.records)  # hears again: unfenced


def test_a_new_controller_counts_a_deaf_broker_from_its_first_heartbeat() -> None:
    """A broker still echoing the previous controller's answer has not heard this one: its
    two-way contact is taken as its first heartbeat here. One that echoes nothing at all
    (just started, or an older broker) keeps the lease each heartbeat gives."""
    ctl, state = cluster_of({1: None, 2: None})
    ctl.on_become_leader(state, 1_000)
    old = HeardAnswer(ctl.answer_key, 500)
    ctl.on_become_leader(state, 2_000)  # a later term: a new key
    assert ctl.answer_key != old.key
    for now in range(2_100, 2_000 + 3 * TIMEOUT_MS, 100):
        ctl.heartbeat_arrived(state, 1, state.brokers[1].broker_epoch, now, old)
        ctl.heartbeat_arrived(state, 2, state.brokers[2].broker_epoch, now)  # echoes nothing
        for b in (1, 2):
            ctl.answered(b, now)
        apply_all(state, ctl.tick(state, now))
        if state.brokers[1].fenced:
            break
    lease_end = 2_100 + TIMEOUT_MS + ctl.config.broker_heartbeat_interval_ms
    assert lease_end <= now < lease_end + 100  # the first tick at or after it
    assert not state.brokers[2].fenced


def test_a_controller_slow_to_answer_does_not_take_its_silence_for_deafness() -> None:
    """Heartbeats keep arriving while the controller's answers wait behind a long commit
    (a topic of 10,000 partitions): each broker echoes the latest answer it was given (or,
    after a controller change, an earlier controller's, this one having given none yet).
    Nobody is deaf, and nobody is fenced, however long the wait."""
    ctl, state = cluster_of({1: None, 2: None})
    ctl.on_become_leader(state, 1_000)
    previous = HeardAnswer(ctl.answer_key, 900)
    ctl.on_become_leader(state, 2_000)
    key = ctl.answer_key
    ctl.answered(1, 2_100)  # broker 1 got one answer, then the controller went quiet
    latest = {1: HeardAnswer(key, 2_100), 2: previous}  # broker 2: none from this one yet
    for now in range(2_200, 2_000 + 4 * TIMEOUT_MS, 100):
        for b in (1, 2):
            ctl.heartbeat_arrived(state, b, state.brokers[b].broker_epoch, now, latest[b])
        apply_all(state, ctl.tick(state, now))
    assert not state.brokers[1].fenced and not state.brokers[2].fenced


def test_an_answer_too_late_for_the_broker_to_wait_for_proves_no_deafness() -> None:
    """Answers that leave more than half a session after their heartbeat arrived (the
    broker gave up on them: its request timed out, so it never echoes them) do not count
    as given; the broker echoing the last timely one keeps its lease."""
    ctl, state = cluster_of({1: None})
    ctl.on_become_leader(state, 0)
    key = ctl.answer_key
    ctl.answered(1, 100, arrived_ms=90)  # timely: heard and echoed
    heard = HeardAnswer(key, 100)
    for now in range(200, 4 * TIMEOUT_MS, 100):
        ctl.heartbeat_arrived(state, 1, state.brokers[1].broker_epoch, now, heard)
        late_by = TIMEOUT_MS // 2 + 1
        ctl.answered(1, now, arrived_ms=now - late_by)  # answers to earlier, abandoned ones
        apply_all(state, ctl.tick(state, now))
    assert not state.brokers[1].fenced


def test_a_deaf_former_controller_is_counted_from_the_quorum_s_last_contact() -> None:
    """Chaos seeds 310 and 302, one-way-in cuts of the controller's node: it stopped
    leading for want of acknowledgements, yet its broker's heartbeats kept reaching the new
    controller, and the first of them (unanswered yet) renewed its lease, so it was fenced
    a session after that, 4-7 s after the cut. The previous leader's broker is now counted
    from the quorum's last contact with it until it echoes an answer of this controller;
    when it does, the usual rules apply. Another broker echoing the old answer is not."""
    config = ControllerConfig(3_000, new_controller_grace_ms=3_000, reannounce_window_ms=1_000)

    def fenced_at(previous_leader: int | None, hears_us: bool) -> int | None:
        ctl, state = cluster_of({1: None, 2: None, 3: None})
        ctl.config = config
        ctl.on_become_leader(state, 1_000)
        old = HeardAnswer(ctl.answer_key, 900)  # what every broker heard last from node 1
        ctl.on_become_leader(state, 10_000, 9_000, previous_leader)
        heard = dict.fromkeys((1, 2, 3), old)
        for now in range(10_100, 20_000, 100):
            for b in (1, 2, 3):
                ctl.heartbeat_arrived(state, b, state.brokers[b].broker_epoch, now, heard[b])
                ctl.answered(b, now)
                if b != 1 or hears_us:
                    heard[b] = HeardAnswer(ctl.answer_key, now)
            decision = ctl.tick(state, now)
            apply_all(state, decision)
            if state.brokers[1].fenced:
                return now
            assert not state.brokers[2].fenced and not state.brokers[3].fenced
        return None

    def tick_after(lease_end_ms: int) -> int:
        return -(-lease_end_ms // 100) * 100  # the first tick at or after it

    interval = config.broker_heartbeat_interval_ms
    from_first_here = tick_after(10_100 + 3_000 + interval)
    assert fenced_at(None, hears_us=False) == from_first_here  # as before
    assert fenced_at(1, hears_us=False) == tick_after(9_000 + 3_000 + interval)  # last contact
    assert fenced_at(1, hears_us=True) is None  # it hears this controller: never fenced
    assert fenced_at(2, hears_us=False) == from_first_here  # not the previous leader


def test_a_tick_scans_the_partitions_again_only_when_something_changed() -> None:
    """The scan for moves off dead brokers reads every partition: at 10,000 partitions, ten
    times a second. One that found nothing is repeated only once an entry was applied or
    the live brokers changed (a fence is still found, and so is a partition whose ISR an
    entry changed)."""
    ctl, state = cluster_of({1: None, 2: None, 3: None})
    apply_all(state, ctl.create_topic(state, "t", 6, 3, {}))
    ctl.on_become_leader(state, 0)  # the leader rebalance (a scan of its own) is not due
    scans = 0

    class CountingPartitions(dict):  # type: ignore[type-arg]
        def items(self):  # type: ignore[no-untyped-def]
            nonlocal scans
            scans += 1
            return super().items()

    state.partitions = CountingPartitions(state.partitions)
    for now in (100, 200, 300):
        for b in (1, 2, 3):
            ctl.heartbeat(state, b, state.brokers[b].broker_epoch, True, now)
        assert ctl.tick(state, now).records == []
    assert scans == 1
    apply_all(state, ctl.heartbeat(state, 1, state.brokers[1].broker_epoch, True, 400))
    state.apply(state.last_applied_index + 1, RegisterBroker(4, "inc4", "h", 4))  # an entry
    ctl.tick(state, 400)
    assert scans == 2
    for b in (1, 2):  # broker 3 goes silent: its lease ends, the live set changes
        ctl.heartbeat(state, b, state.brokers[b].broker_epoch, True, TIMEOUT_MS + 500)
    decision = ctl.tick(state, TIMEOUT_MS + 500)
    assert scans == 3 and any(isinstance(r, PartitionChange) for r in decision.records)


def test_a_former_controller_not_yet_hearing_this_one_removes_no_isr_member() -> None:
    """Chaos seed 327, a one-way-in cut of the controller's node: it stopped leading the
    quorum 1.8 s into the cut, then, as a partition leader whose followers' fetches no
    longer reached it, asked the new controller to shrink two ISRs to itself, which was
    committed (its own rule against removals counted from when it stopped leading). When it
    was fenced those partitions had no in-sync replica to elect until the cut healed
    (5.3 s gaps). Its removals are now refused until it echoes an answer of this
    controller; additions are not, and other leaders are not affected."""
    ctl, state = cluster_of({1: None, 2: None, 3: None})
    apply_all(state, ctl.create_topic(state, "t", 3, 3, {}))
    ctl.on_become_leader(state, 1_000)
    old = HeardAnswer(ctl.answer_key, 900)
    ctl.on_become_leader(state, 10_000, 9_000, previous_leader=1)

    def shrink_to_leader(leader: int) -> Decision:
        key, p = next((k, p) for k, p in state.partitions.items() if p.leader == leader)
        return ctl.alter_partition(state, *key, leader, p.leader_epoch, p.partition_epoch, [leader])

    refused = shrink_to_leader(1)
    assert refused.error == ErrorCode.INVALID_REQUEST and refused.records == []
    assert shrink_to_leader(2).records  # another leader's removal goes through
    ctl.heartbeat_arrived(state, 1, state.brokers[1].broker_epoch, 10_100, old)
    ctl.answered(1, 10_100)
    ctl.heartbeat_arrived(
        state, 1, state.brokers[1].broker_epoch, 10_200, HeardAnswer(ctl.answer_key, 10_100)
    )
    assert shrink_to_leader(1).records  # it hears this controller: the usual rules
