"""Kafka's ConsumerGroupHeartbeat (KIP-848) as a heartbeat of the group coordinator.

Kafka's consumer protocol and rillet's own heartbeat share their model (server-side target
assignment, reached incrementally, a member owning only what its answer lists); they differ
in what a heartbeat carries. A Kafka member sends an *epoch* (0 joins, -1 leaves, -2 leaves
for now as a static member, otherwise the epoch it was last given), names topics by topic id,
and leaves out what did not change since its last heartbeat (subscription, owned partitions).
:func:`kafka_heartbeat` turns such a request into the coordinator's :class:`MemberHeartbeat`
against the committed state, or refuses it with the error Kafka sends. Pure: state in,
decision out.

A static member leaving for now (epoch -2) leaves here (its partitions move at once, where
Kafka keeps them for its session); while a member holds an instance id, another member
joining with it is refused UNRELEASED_INSTANCE_ID, as in Kafka.

Epochs: a member's epoch is the generation it was last told (``MemberState.generation``).
An epoch above it was never given (FENCED_MEMBER_EPOCH); an older one is accepted only while
what it reports owning is still its own (its previous answer was lost), as Kafka does.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.metadata_quorum.assignors import ASSIGNORS
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.group_coordinator import (
    MAX_SESSION_TIMEOUT_MS,
    MIN_SESSION_TIMEOUT_MS,
    MemberHeartbeat,
)
from rillet.metadata_quorum.group_registry import TopicPartitionId
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode

JOIN_EPOCH = 0
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2

# Kafka's server assignor names and the coordinator's assignors that serve them: Kafka's
# ``uniform`` balances while keeping what members own, as ``sticky`` does here.
KAFKA_ASSIGNORS = {"uniform": "sticky", "range": "range"}


@dataclass(frozen=True, slots=True)
class GroupLimits:
    """The coordinator's settings a Kafka heartbeat needs (Kafka's group.consumer.*)."""

    session_timeout_ms: int  # group.consumer.session.timeout.ms: Kafka members send none
    max_size: int  # group.consumer.max.size

    def __post_init__(self) -> None:
        if not MIN_SESSION_TIMEOUT_MS <= self.session_timeout_ms <= MAX_SESSION_TIMEOUT_MS:
            raise ValueError(
                f"consumer_session_timeout_ms must be in "
                f"[{MIN_SESSION_TIMEOUT_MS}, {MAX_SESSION_TIMEOUT_MS}]"
            )
        if self.max_size < 1:
            raise ValueError("consumer_max_size must be >= 1")


def assignor_name(kafka_name: str | None) -> str | None:
    """The coordinator's assignor for Kafka's ``server_assignor`` ("" for the group's);
    None when neither Kafka's names nor the coordinator's own know it."""
    if not kafka_name:
        return ""
    if kafka_name in KAFKA_ASSIGNORS:
        return KAFKA_ASSIGNORS[kafka_name]
    return kafka_name if kafka_name in ASSIGNORS else None


def kafka_heartbeat(
    state: MetadataState, req: gm.ConsumerGroupHeartbeatRequest, limits: GroupLimits
) -> MemberHeartbeat | Decision:
    """The coordinator heartbeat a Kafka member's request stands for (epoch 0 or above), or
    the refusal Kafka would answer."""
    epoch = req.member_epoch if req.member_epoch is not None else JOIN_EPOCH
    group = state.groups.group(req.group_id)
    current = group.members.get(req.member_id) if group is not None else None
    assignor = assignor_name(req.assignor)
    if assignor is None:
        known = ", ".join(sorted(KAFKA_ASSIGNORS))
        return Decision([], ErrorCode.UNSUPPORTED_ASSIGNOR, f"server assignors: {known}")
    owned = None if req.owned is None else _ids(state, req.owned, req.by_topic_id)
    if epoch == JOIN_EPOCH:
        if current is None and group is not None and len(group.members) >= limits.max_size:
            return Decision(
                [],
                ErrorCode.GROUP_MAX_SIZE_REACHED,
                f"the group has {limits.max_size} members (group.consumer.max.size)",
            )
        if current is None and req.instance_id is not None and group is not None:
            holder = _instance_holder(state, req.group_id, req.instance_id)
            if holder is not None:
                return Decision(
                    [],
                    ErrorCode.UNRELEASED_INSTANCE_ID,
                    f"instance {req.instance_id} is still held by member {holder}",
                )
    elif current is None:
        return Decision([], ErrorCode.UNKNOWN_MEMBER_ID, "unknown member (expired or left?)")
    elif epoch > current.generation:
        return Decision(
            [], ErrorCode.FENCED_MEMBER_EPOCH, f"epoch {epoch} was never given to this member"
        )
    elif epoch < current.generation and owned is not None and not owned <= current.owned:
        return Decision(
            [],
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"epoch {epoch} is older than {current.generation} and reports other partitions",
        )
    recorded = current.member if current is not None else None
    topics = (
        tuple(recorded.topics) if req.keep_topics and recorded is not None else tuple(req.topics)
    )
    pattern = recorded.pattern if req.keep_pattern and recorded is not None else req.pattern
    return MemberHeartbeat(
        req.group_id,
        req.member_id,
        epoch == JOIN_EPOCH and current is None,
        req.client_id,
        req.client_host,
        topics,
        pattern or None,
        limits.session_timeout_ms,
        assignor or (recorded.assignor if recorded is not None else ""),
        req.instance_id,
        owned,
    )


def _instance_holder(state: MetadataState, group_id: str, instance_id: str) -> str | None:
    group = state.groups.group(group_id)
    for mid, m in sorted(group.members.items()) if group is not None else []:
        if m.member.instance_id == instance_id:
            return mid
    return None


def _ids(
    state: MetadataState, parts: list[gm.GroupTopicPartitions], by_topic_id: bool
) -> frozenset[TopicPartitionId]:
    out: set[TopicPartitionId] = set()
    for tp in parts:
        topic_id = tp.topic if by_topic_id else state.topic_ids.get(tp.topic)
        if topic_id is not None and topic_id in state.topics:
            out.update((topic_id, p) for p in tp.partitions)
    return frozenset(out)
