"""Partition reassignment and leader election as controller decisions (no sockets): a move
adds the target replicas, completes once they are in sync (moving leadership off a leaving
leader), survives a controller change and a killed leader, and can be cancelled."""

from __future__ import annotations

import random

from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.features import bootstrap_records
from rillet.metadata_quorum.reassignment import MoveRequest
from rillet.metadata_quorum.reassignment_decisions import (
    ElectionType,
    alter_reassignments,
    elect_leaders,
    list_reassignments,
)
from rillet.metadata_quorum.records import (
    PartitionReassignment,
    PartitionRecord,
    RegisterBroker,
    TopicConfigsRecord,
    TopicRecord,
    decode_entry,
    encode_entry,
)
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode

TID = "00000000-0000-4000-8000-000000000001"


def apply_all(state: MetadataState, decision: Decision) -> None:
    if decision.records:
        # Through the log's encoding, as a node applies them.
        records = decode_entry(encode_entry(decision.records))
        state.apply_entry(state.last_applied_index + 1, records)


def cluster(brokers: int = 4) -> tuple[Controller, MetadataState]:
    """Brokers 1..n live; topic "t" with partition 0 on {1,2,3}, led by 1."""
    ctl = Controller(ControllerConfig(9000), random.Random(1))
    state = MetadataState()
    apply_all(state, Decision(bootstrap_records(state)))  # a new cluster's feature level
    for b in range(1, brokers + 1):
        apply_all(state, ctl.register_broker(state, RegisterBroker(b, f"i{b}", "h", b), 0))
        apply_all(state, ctl.heartbeat(state, b, state.brokers[b].broker_epoch, True, 0))
    apply_all(
        state, Decision([PartitionRecord(TID, 0, [1, 2, 3], [1, 2, 3], 1), TopicRecord("t", TID)])
    )
    return ctl, state


def move(state: MetadataState, target: tuple[int, ...] | None) -> Decision:
    decision = alter_reassignments(state, [MoveRequest("t", 0, target)])
    apply_all(state, decision)
    return decision


def isr_change(ctl: Controller, state: MetadataState, leader: int, isr: list[int]) -> Decision:
    p = state.partitions[(TID, 0)]
    d = ctl.alter_partition(state, TID, 0, leader, p.leader_epoch, p.partition_epoch, isr)
    apply_all(state, d)
    return d


def test_move_adds_targets_then_completes_when_in_sync_moving_the_leader() -> None:
    ctl, state = cluster()
    decision = move(state, (2, 3, 4))
    assert decision.results[0].error == ErrorCode.NONE
    p = state.partitions[(TID, 0)]
    assert (p.replicas, p.adding_replicas, p.removing_replicas) == ((2, 3, 4, 1), (4,), (1,))
    assert (p.leader, p.isr, p.leader_epoch) == (1, (1, 2, 3), 0)  # nothing else moved
    assert [m.replicas for m in list_reassignments(state)] == [(2, 3, 4, 1)]
    waiting = ctl.tick(state, 1).records  # 4 is not in sync: the move waits
    assert not any(isinstance(r, PartitionReassignment) for r in waiting)
    d = isr_change(ctl, state, 1, [1, 2, 3, 4])  # the leader takes 4 into the ISR
    assert isinstance(d.records[0], PartitionReassignment)
    p = state.partitions[(TID, 0)]
    assert (p.replicas, p.isr, p.moving) == ((2, 3, 4), (2, 3, 4), False)
    assert (p.leader, p.leader_epoch) == (2, 1)  # off the leaving replica, to the target's first
    assert list_reassignments(state) == [] and state.moving_partitions == set()


def test_cancel_returns_to_the_original_replicas() -> None:
    ctl, state = cluster()
    move(state, (2, 3, 4))
    isr_change(ctl, state, 1, [1, 2, 3])  # unchanged ISR: nothing committed
    d = move(state, None)
    assert d.results[0].error == ErrorCode.NONE
    p = state.partitions[(TID, 0)]
    # The original set (in the order the move listed it, as Kafka does), leader unchanged.
    assert (set(p.replicas), p.isr, p.leader, p.moving) == ({1, 2, 3}, (1, 2, 3), 1, False)
    again = move(state, None)
    assert again.results[0].error == ErrorCode.NO_REASSIGNMENT_IN_PROGRESS
    assert again.records == []


def test_a_move_survives_a_controller_change_and_a_snapshot() -> None:
    _ctl, state = cluster()
    move(state, (2, 3, 4))
    p = state.partitions[(TID, 0)]
    # The ISR took 4 under a controller that died before completing the move.
    apply_all(
        state,
        Decision([PartitionReassignment(TID, 0, list(p.replicas), [1, 2, 3, 4], 1, [4], [1])]),
    )
    restored = MetadataState.from_snapshot(state.to_snapshot())
    assert restored.partitions[(TID, 0)] == state.partitions[(TID, 0)]
    assert restored.moving_partitions == {(TID, 0)}
    successor = Controller(ControllerConfig(9000), random.Random(2))
    successor.on_become_leader(restored, 0)
    apply_all(restored, successor.tick(restored, 1))
    p = restored.partitions[(TID, 0)]
    assert (p.replicas, p.leader, p.moving) == ((2, 3, 4), 2, False)


def test_leader_killed_mid_move_hands_over_to_a_target_replica() -> None:
    ctl, state = cluster()
    move(state, (2, 3, 4))
    apply_all(state, ctl.controlled_shutdown(state, 1, state.brokers[1].broker_epoch))
    p = state.partitions[(TID, 0)]
    assert (p.leader, p.isr, p.moving) == (2, (2, 3), True)
    isr_change(ctl, state, 2, [2, 3, 4])
    p = state.partitions[(TID, 0)]
    assert (p.replicas, p.isr, p.leader, p.moving) == ((2, 3, 4), (2, 3, 4), 2, False)


def test_bad_moves_are_refused_per_partition() -> None:
    _ctl, state = cluster()
    d = alter_reassignments(
        state,
        [
            MoveRequest("t", 0, (2, 3, 9)),
            MoveRequest("t", 5, (1,)),
            MoveRequest("nope", 0, (1,)),
        ],
    )
    assert [r.error for r in d.results] == [
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ]
    assert d.records == []
    assert move(state, (1, 2, 3)).records == []  # already there


def test_shrink_in_sync_completes_at_once() -> None:
    _ctl, state = cluster()
    move(state, (2, 3))
    p = state.partitions[(TID, 0)]
    assert (p.replicas, p.isr, p.leader, p.moving) == ((2, 3), (2, 3), 2, False)


def test_elect_preferred_and_unclean_only_when_the_topic_allows() -> None:
    ctl, state = cluster()
    isr_change(ctl, state, 1, [1, 3])  # 2 lags
    move(state, (3, 1, 2))  # a reorder: 3 becomes preferred
    d = elect_leaders(state, ElectionType.PREFERRED, [("t", 0)], False)
    apply_all(state, d)
    assert d.results[0].error == ErrorCode.NONE and state.partitions[(TID, 0)].leader == 3
    again = elect_leaders(state, ElectionType.PREFERRED, [("t", 0)], False)
    assert again.results[0].error == ErrorCode.ELECTION_NOT_NEEDED
    for b in (3, 1):  # the whole ISR dies: no leader, 2 is live but out of sync
        apply_all(state, ctl.controlled_shutdown(state, b, state.brokers[b].broker_epoch))
    assert state.partitions[(TID, 0)].leader == -1
    refused = elect_leaders(state, ElectionType.UNCLEAN, [("t", 0)], False)
    assert refused.results[0].error == ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
    assert "unclean.leader.election.enable" in (refused.results[0].message or "")
    apply_all(
        state, Decision([TopicConfigsRecord(TID, {"unclean.leader.election.enable": "true"})])
    )
    d = elect_leaders(state, ElectionType.UNCLEAN, [("t", 0)], False)
    apply_all(state, d)
    assert (state.partitions[(TID, 0)].leader, state.partitions[(TID, 0)].isr) == (2, (2,))


def test_a_new_move_replaces_one_in_progress_from_the_original_replicas() -> None:
    ctl, state = cluster(5)
    move(state, (2, 3, 4))
    move(state, (1, 2, 5))  # 4 was being added: it leaves again
    p = state.partitions[(TID, 0)]
    assert (p.replicas, p.adding_replicas, p.removing_replicas) == ((1, 2, 5, 3), (5,), (3,))
    # Growing the topic meanwhile keeps its replication factor (not the moving set's size).
    apply_all(state, ctl.create_partitions(state, "t", 2))
    assert len(state.partitions[(TID, 1)].replicas) == 3
