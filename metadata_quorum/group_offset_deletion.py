"""Deleting some of a group's committed offsets (Kafka's OffsetDelete): which may go.

An operator removes the offsets of topics a group no longer reads, so they stop showing as
lag and a later subscription starts from ``auto.offset.reset``. As in Kafka, an offset may
not be deleted while the group's members are subscribed to its topic: they would commit it
again, or start over from the reset policy behind the operator's back. The answer has a
group-level error (GROUP_ID_NOT_FOUND for a group rillet does not know) and one per
partition (GROUP_SUBSCRIBED_TO_TOPIC, UNKNOWN_TOPIC_OR_PARTITION); the partitions that may
go leave in one ``GroupOffsetsDeleted`` record. Deleting an offset that was never committed
succeeds, as in Kafka.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.metadata_quorum.classic_group_registry import ClassicGroupState
from rillet.metadata_quorum.classic_subscriptions import decode_subscription
from rillet.metadata_quorum.group_coordinator import member_subscriptions
from rillet.metadata_quorum.group_records import GroupOffsetsDeleted
from rillet.metadata_quorum.group_registry import GroupState, to_list
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode

CONSUMER_PROTOCOL_TYPE = "consumer"


@dataclass(frozen=True, slots=True)
class OffsetDeletion:
    """The group-level error, one error per (topic name, partition) asked about, and the
    record to commit (None when nothing may go)."""

    error: ErrorCode
    message: str | None
    partitions: dict[tuple[str, int], ErrorCode]
    record: GroupOffsetsDeleted | None


def decide_offset_deletion(
    state: MetadataState, group_id: str, partitions: list[tuple[str, int]]
) -> OffsetDeletion:
    if not group_id:
        return OffsetDeletion(ErrorCode.INVALID_GROUP_ID, "the group id is empty", {}, None)
    groups = state.groups
    kip848 = groups.group(group_id)
    classic = state.classic_groups.group(group_id)
    if kip848 is None and classic is None and group_id not in groups.offsets:
        return OffsetDeletion(ErrorCode.GROUP_ID_NOT_FOUND, f"no group {group_id!r}", {}, None)
    read = _topics_read(state, kip848, classic)
    errors: dict[tuple[str, int], ErrorCode] = {}
    deleted: set[tuple[str, int]] = set()
    for topic, partition in dict.fromkeys(partitions):
        topic_id = state.topic_ids.get(topic)
        if topic_id is None or (topic_id, partition) not in state.partitions:
            errors[(topic, partition)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        elif read is None or topic_id in read:
            errors[(topic, partition)] = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
        else:
            errors[(topic, partition)] = ErrorCode.NONE
            deleted.add((topic_id, partition))
    record = GroupOffsetsDeleted(group_id, to_list(deleted)) if deleted else None
    return OffsetDeletion(ErrorCode.NONE, None, errors, record)


def _topics_read(
    state: MetadataState, kip848: GroupState | None, classic: ClassicGroupState | None
) -> set[str] | None:
    """The ids of the topics some member of the group reads; None when a classic member's
    subscription cannot be read (it counts as reading every topic)."""
    read: set[str] = set()
    if kip848 is not None:
        read.update(*member_subscriptions(state, kip848, set(), None).values())
    if classic is None:
        return read
    for cm in classic.members.values():
        names = None
        if classic.protocol_type == CONSUMER_PROTOCOL_TYPE:
            names = subscription_topics(cm.member.metadata_for(classic.protocol_name))
        if names is None:
            return None
        read.update(state.topic_ids[n] for n in names if n in state.topic_ids)
    return read


def subscription_topics(metadata: bytes) -> list[str] | None:
    """The topic names of a classic consumer's subscription (None when the bytes do not
    hold one)."""
    subscription = decode_subscription(metadata)
    return None if subscription is None else subscription.topics
