"""Partition reassignment (Kafka's KIP-455) and leader election as pure decisions.

A move from replicas O to a target T goes through the metadata log in two records:

1. start: the replica set becomes T followed by the replicas of O not in T, with
   ``adding = T - O`` and ``removing = O - T``. Brokers of ``adding`` open the partition and
   fetch as followers; the leader adds each to the ISR once it has caught up, as for any
   follower. Nothing else changes: the leader and ISR stay, so acks=all keeps its meaning.
2. complete: once every replica of T is in the ISR, the replica set becomes T, the ISR
   loses the removed replicas and, if the leader is one of them, leadership moves to a live
   in-sync replica of T (so no acknowledged record is lost: the new leader is in sync).
   Brokers of ``removing`` then close the partition and delete its data.

Cancelling returns to O the same way (the adding replicas leave, the original ones were
never removed). The state lives in the log only, so a new controller, or a restarted node,
picks up a move where the log left it: completion is retried on every controller tick.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from rillet.metadata_quorum.partition_state import PartitionState
from rillet.metadata_quorum.records import NO_LEADER, PartitionReassignment
from rillet.wire.error_codes import ErrorCode


@dataclass(frozen=True, slots=True)
class MoveRequest:
    """One partition's new replica list (preferred leader first); None cancels its move."""

    topic: str
    partition: int
    target: tuple[int, ...] | None


@dataclass(frozen=True, slots=True)
class PartitionResult:
    """The answer for one partition of a reassignment or election request."""

    topic: str
    partition: int
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None


class MoveRefused(Exception):
    """A move or cancellation that cannot be carried out (the error answers the caller)."""

    def __init__(self, error: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def _record(
    topic_id: str,
    partition: int,
    replicas: Sequence[int],
    isr: Iterable[int],
    leader: int,
    adding: Sequence[int] = (),
    removing: Sequence[int] = (),
) -> PartitionReassignment:
    return PartitionReassignment(
        topic_id, partition, list(replicas), sorted(isr), leader, list(adding), list(removing)
    )


def start_move(
    topic_id: str,
    partition: int,
    p: PartitionState,
    target: Sequence[int],
    registered: set[int],
    live: set[int],
) -> PartitionReassignment | None:
    """The record that starts moving ``p`` to ``target`` (None: it is there already).

    A move already in progress is replaced: the new one starts from that move's original
    replicas, so replicas it was adding and that the new target drops leave again.
    """
    if not target:
        raise MoveRefused(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "the replica list is empty")
    if len(set(target)) != len(target):
        raise MoveRefused(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "a replica is listed twice")
    unknown = sorted(set(target) - registered)
    if unknown:
        raise MoveRefused(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"broker(s) {', '.join(map(str, unknown))} are not registered",
        )
    original = p.original_replicas()
    adding = [r for r in target if r not in original]
    removing = [r for r in original if r not in target]
    replicas = [*target, *removing]
    if tuple(replicas) == p.replicas and not adding and not removing and not p.moving:
        return None
    # The ISR never names a replica outside the set: adding replicas that the new target
    # drops (a replaced move) leave it now.
    isr = [r for r in p.isr if r in replicas]
    leader = p.leader
    if leader not in replicas:  # only when a replaced move's adding replica led
        leader = next((r for r in replicas if r in isr and r in live), NO_LEADER)
    if not isr:
        raise MoveRefused(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT, "no in-sync replica would remain during the move"
        )
    started = _record(topic_id, partition, replicas, isr, leader, adding, removing)
    done = complete_move(topic_id, partition, _as_state(p, started), live)
    return done if done is not None else started


def complete_move(
    topic_id: str, partition: int, p: PartitionState, live: set[int]
) -> PartitionReassignment | None:
    """The record that finishes ``p``'s move once every target replica is in sync, or None
    (no move, or not yet: a target replica still catching up, or no live in-sync target
    replica to take over from a leader that leaves)."""
    if not p.moving:
        return None
    target = p.target_replicas()
    if not set(target) <= set(p.isr):
        return None
    leader = p.leader
    if leader not in target:
        leader = next((r for r in target if r in live), NO_LEADER)
        if leader == NO_LEADER:
            return None
    return _record(topic_id, partition, target, target, leader)


def cancel_move(
    topic_id: str, partition: int, p: PartitionState, live: set[int]
) -> PartitionReassignment:
    """The record that returns ``p`` to its original replicas; refused when none of them is
    in sync (their copies may lack acknowledged records: the move must finish instead)."""
    if not p.moving:
        raise MoveRefused(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, "no reassignment in progress")
    original = p.original_replicas()
    isr = [r for r in p.isr if r in original]
    leader = p.leader
    if leader not in original:
        leader = next((r for r in original if r in isr and r in live), NO_LEADER)
    if not isr or leader == NO_LEADER:
        raise MoveRefused(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "no live in-sync original replica to return to: let the move finish",
        )
    return _record(topic_id, partition, original, isr, leader)


def _as_state(p: PartitionState, r: PartitionReassignment) -> PartitionState:
    """``p`` as ``r`` leaves it (epochs aside): to chain decisions within one entry."""
    return replace(
        p,
        replicas=tuple(r.replicas),
        isr=tuple(r.isr),
        leader=r.leader,
        adding_replicas=tuple(r.adding_replicas),
        removing_replicas=tuple(r.removing_replicas),
    )


def with_isr(p: PartitionState, isr: Sequence[int]) -> PartitionState:
    """``p`` with a new ISR (an AlterPartition about to commit)."""
    return replace(p, isr=tuple(sorted(isr)))
