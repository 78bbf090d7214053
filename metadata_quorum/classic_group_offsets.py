"""Offset commits of classic groups, fenced like Kafka's: a commit that names a member (or
a generation, or an instance id) must come from a current member with the current generation,
and not while the group waits for the leader's assignment; a commit naming nobody is
accepted only while the group has no members (tools, batch jobs). Offsets go to the one
offset registry shared with the other kind of group.
"""

from __future__ import annotations

from collections.abc import Mapping

from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.group_records import CommittedOffset, OffsetsCommitted
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.classic_group_messages import COMPLETING_REBALANCE
from rillet.wire.error_codes import ErrorCode


def is_classic_group(state: MetadataState, group_id: str) -> bool:
    """Whether requests for ``group_id`` follow the classic protocol: it is recorded as a
    classic group and no member of the consumer (KIP-848) protocol holds it."""
    kip848 = state.groups.group(group_id)
    if kip848 is not None and kip848.members:
        return False
    return state.classic_groups.group(group_id) is not None


def held_by_classic_members(state: MetadataState, group_id: str) -> bool:
    """Classic members hold the group: the consumer (KIP-848) protocol is refused there."""
    group = state.classic_groups.group(group_id)
    return group is not None and group.in_use


def classic_member_refusal(
    state: MetadataState,
    group_id: str,
    member_id: str,
    group_instance_id: str | None,
    generation: int,
) -> Decision | None:
    """Why a commit naming a member of a classic group is refused, or None when it comes from
    a current member (not fenced by its instance id) at the group's generation."""
    group = state.classic_groups.group(group_id)
    if group is None:
        return Decision([], ErrorCode.ILLEGAL_GENERATION, "the group has no generation")
    if group_instance_id is not None:
        owner = group.member_of_instance(group_instance_id)
        if owner is not None and owner != member_id:
            code = ErrorCode.FENCED_INSTANCE_ID
            return Decision([], code, "another member has the instance id")
    if member_id not in group.members:
        return Decision([], ErrorCode.UNKNOWN_MEMBER_ID, "not a member of the group")
    if generation != group.generation:
        return Decision([], ErrorCode.ILLEGAL_GENERATION, "stale generation")
    return None


def commit_classic_offsets(
    state: MetadataState,
    group_id: str,
    member_id: str,
    group_instance_id: str | None,
    generation: int,
    offsets: list[tuple[str, int, int, str]],
    now_ms: int,
    errors: dict[tuple[str, int], ErrorCode],
    leader_epochs: Mapping[tuple[str, int], int] | None = None,
) -> Decision:
    """Commit (topic name, partition, offset, metadata) tuples, each with its leader epoch
    from ``leader_epochs`` (-1 when absent); per-partition refusals go to ``errors``."""
    group = state.classic_groups.group(group_id)
    if generation >= 0 or member_id or group_instance_id is not None:
        refused = classic_member_refusal(state, group_id, member_id, group_instance_id, generation)
        if refused is not None:
            return refused
        if group is not None and group.phase == COMPLETING_REBALANCE:
            return Decision([], ErrorCode.REBALANCE_IN_PROGRESS, "the assignment is pending")
    elif group is not None and group.members:
        return Decision([], ErrorCode.UNKNOWN_MEMBER_ID, "only members commit to this group")
    accepted: list[CommittedOffset] = []
    for topic, partition, offset, metadata in offsets:
        topic_id = state.topic_ids.get(topic)
        if topic_id is None or (topic_id, partition) not in state.partitions:
            errors[(topic, partition)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        elif offset < 0:
            errors[(topic, partition)] = ErrorCode.INVALID_REQUEST
        else:
            epoch = (leader_epochs or {}).get((topic, partition), -1)
            accepted.append(CommittedOffset(topic_id, partition, offset, metadata, now_ms, epoch))
    return Decision([OffsetsCommitted(group_id, accepted)] if accepted else [])
