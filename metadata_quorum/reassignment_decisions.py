"""The controller's reassignment and election decisions over the whole metadata state:
AlterPartitionReassignments, ListPartitionReassignments, ElectLeaders, and the tick's
completion of moves whose target replicas are all in sync (see reassignment.py)."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.features import PARTITION_REASSIGNMENT, refusal_below
from rillet.metadata_quorum.partition_state import PartitionState
from rillet.metadata_quorum.reassignment import (
    MoveRefused,
    MoveRequest,
    PartitionResult,
    cancel_move,
    complete_move,
    start_move,
)
from rillet.metadata_quorum.records import MetadataRecord, PartitionChange, PartitionReassignment
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode

UNCLEAN_ELECTION_CONFIG = "unclean.leader.election.enable"


class ElectionType(enum.IntEnum):
    """Kafka's ElectLeaders election types."""

    PREFERRED = 0
    UNCLEAN = 1


@dataclass(frozen=True, slots=True)
class PerPartitionDecision(Decision):
    """A decision with one answer per partition asked about."""

    results: list[PartitionResult] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class OngoingMove:
    """One partition's move in progress, as ListPartitionReassignments reports it."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]


def _lookup(
    state: MetadataState, topic: str, partition: int
) -> tuple[str, PartitionState] | PartitionResult:
    t = state.topic_by_name(topic)
    p = state.partitions.get((t.topic_id, partition)) if t is not None else None
    if t is None or p is None:
        return PartitionResult(
            topic, partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "unknown topic or partition"
        )
    return t.topic_id, p


def alter_reassignments(state: MetadataState, moves: Sequence[MoveRequest]) -> PerPartitionDecision:
    """Start, replace or cancel the moves of several partitions, all in one entry; each
    partition is answered on its own (a refused one does not hold back the others).
    Refused as a whole below the feature level of reassignment records (features.py)."""
    refusal = refusal_below(state, PARTITION_REASSIGNMENT, "partition reassignment")
    if refusal is not None:
        return PerPartitionDecision([], ErrorCode.UNSUPPORTED_VERSION, refusal)
    registered = set(state.brokers)
    live = set(state.unfenced_brokers())
    records: list[MetadataRecord] = []
    results: list[PartitionResult] = []
    seen: set[tuple[str, int]] = set()
    for move in moves:
        found = _lookup(state, move.topic, move.partition)
        if isinstance(found, PartitionResult):
            results.append(found)
            continue
        topic_id, p = found
        if (topic_id, move.partition) in seen:
            results.append(
                PartitionResult(
                    move.topic,
                    move.partition,
                    ErrorCode.INVALID_REQUEST,
                    "the partition is named twice",
                )
            )
            continue
        seen.add((topic_id, move.partition))
        record: PartitionReassignment | None
        try:
            if move.target is None:
                record = cancel_move(topic_id, move.partition, p, live)
            else:
                record = start_move(topic_id, move.partition, p, move.target, registered, live)
        except MoveRefused as exc:
            results.append(PartitionResult(move.topic, move.partition, exc.error, exc.message))
            continue
        if record is not None:
            records.append(record)
        results.append(PartitionResult(move.topic, move.partition))
    return PerPartitionDecision(records, results=results)


def list_reassignments(
    state: MetadataState, partitions: Sequence[tuple[str, int]] | None = None
) -> list[OngoingMove]:
    """Moves in progress, of the given (topic, partition)s or of all partitions."""
    if partitions is None:
        keys = sorted(state.moving_partitions)
    else:
        keys = []
        for topic, partition in partitions:
            found = state.topic_by_name(topic)
            if found is not None:
                keys.append((found.topic_id, partition))
    out: list[OngoingMove] = []
    for key in keys:
        p = state.partitions.get(key)
        named = state.topics.get(key[0])
        if p is not None and named is not None and p.moving:
            out.append(
                OngoingMove(named.name, key[1], p.replicas, p.adding_replicas, p.removing_replicas)
            )
    return sorted(out, key=lambda m: (m.topic, m.partition))


def advance_moves(state: MetadataState) -> list[MetadataRecord]:
    """The records that complete every move whose target replicas are all in sync."""
    live = set(state.unfenced_brokers())
    out: list[MetadataRecord] = []
    for key in sorted(state.moving_partitions):
        p = state.partitions.get(key)
        if p is not None and key[0] in state.topics:
            record = complete_move(key[0], key[1], p, live)
            if record is not None:
                out.append(record)
    return out


def unclean_allowed(state: MetadataState, topic_id: str, default: bool) -> bool:
    topic = state.topics.get(topic_id)
    configured = topic.configs.get(UNCLEAN_ELECTION_CONFIG) if topic else None
    return default if configured is None else configured.lower() == "true"


def elect_leaders(
    state: MetadataState,
    election: ElectionType,
    partitions: Sequence[tuple[str, int]] | None,
    default_unclean: bool,
) -> PerPartitionDecision:
    """ElectLeaders. Preferred: leadership goes to the first replica when it is live and in
    sync. Unclean: a partition with no leader gets any live replica as leader, only when
    its topic allows unclean election (an out-of-sync leader loses acknowledged records).
    ``partitions`` None: every partition (answers then name only those that changed)."""
    live = set(state.unfenced_brokers())
    if partitions is None:
        asked = [
            (state.topics[t].name, n) for (t, n) in sorted(state.partitions) if t in state.topics
        ]
    else:
        asked = list(partitions)
    records: list[MetadataRecord] = []
    results: list[PartitionResult] = []
    for topic, partition in asked:
        found = _lookup(state, topic, partition)
        if isinstance(found, PartitionResult):
            results.append(found)
            continue
        topic_id, p = found
        result = (
            _preferred(topic_id, topic, partition, p, live)
            if election == ElectionType.PREFERRED
            else _unclean(state, topic_id, topic, partition, p, live, default_unclean)
        )
        if isinstance(result, PartitionChange):
            records.append(result)
            results.append(PartitionResult(topic, partition))
        elif partitions is not None or result.error != ErrorCode.ELECTION_NOT_NEEDED:
            results.append(result)
    return PerPartitionDecision(records, results=results)


def _preferred(
    topic_id: str, topic: str, partition: int, p: PartitionState, live: set[int]
) -> PartitionChange | PartitionResult:
    preferred = p.replicas[0]
    if p.leader == preferred:
        return PartitionResult(
            topic, partition, ErrorCode.ELECTION_NOT_NEEDED, "the preferred replica leads"
        )
    if preferred not in live or preferred not in p.isr:
        return PartitionResult(
            topic,
            partition,
            ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
            f"preferred replica {preferred} is not live and in sync",
        )
    return PartitionChange(topic_id, partition, preferred, None)


def _unclean(
    state: MetadataState,
    topic_id: str,
    topic: str,
    partition: int,
    p: PartitionState,
    live: set[int],
    default_unclean: bool,
) -> PartitionChange | PartitionResult:
    if p.leader in live:
        return PartitionResult(topic, partition, ErrorCode.ELECTION_NOT_NEEDED, "it has a leader")
    in_sync = [r for r in p.replicas if r in live and r in p.isr]
    if in_sync:
        return PartitionChange(topic_id, partition, in_sync[0], None)
    if not unclean_allowed(state, topic_id, default_unclean):
        return PartitionResult(
            topic,
            partition,
            ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
            f"no in-sync replica is live, and {UNCLEAN_ELECTION_CONFIG} is false for "
            f"topic {topic!r}",
        )
    candidates = [r for r in p.replicas if r in live and r not in p.adding_replicas]
    if not candidates:
        return PartitionResult(
            topic, partition, ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, "no replica is live"
        )
    return PartitionChange(topic_id, partition, candidates[0], [candidates[0]])
