"""Classic (JoinGroup/SyncGroup) members of a consumer-protocol group, as KIP-848 has them.

When a group is held by consumer-protocol members (rillet's or Kafka's), a classic consumer
joining it becomes one more member of that group: the server-side assignor assigns for it,
and the classic apis only carry its part of the protocol.

- JoinGroup is the member's heartbeat with its subscription (from its ConsumerProtocol
  Subscription) and the partitions it still owns (v1+ subscriptions; an eager client has
  revoked everything before joining). It is answered at once, never as the leader (the
  member sends an empty SyncGroup), with its epoch as the generation.
- SyncGroup answers the partitions the member owns now in its target, as a ConsumerProtocol
  Assignment. The coordinator grants partitions only at a join, so what a member was told
  at its SyncGroup is exactly what it may own.
- Heartbeat keeps its session and answers REBALANCE_IN_PROGRESS while the member has
  partitions to release or to receive, so it joins again (a cooperative client reporting
  what it kept, an eager one after revoking all).

Pure functions of the committed state; the handlers take them to the controller.
"""

from __future__ import annotations

from rillet.metadata_quorum.classic_subscriptions import decode_subscription, encode_assignment
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.group_coordinator import (
    MAX_SESSION_TIMEOUT_MS,
    MIN_SESSION_TIMEOUT_MS,
    MemberHeartbeat,
)
from rillet.metadata_quorum.group_registry import MemberState, TopicPartitionId
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import classic_group_messages as cgm
from rillet.wire.error_codes import ErrorCode

CONSUMER_PROTOCOL_TYPE = "consumer"


def held_by_consumer_members(state: MetadataState, group_id: str) -> bool:
    """The group has consumer-protocol members: classic joins go to it, not to a classic
    group of the same id."""
    group = state.groups.group(group_id)
    return group is not None and bool(group.members)


def join_heartbeat(
    state: MetadataState, req: cgm.ClassicJoinGroupRequest, member_id: str
) -> MemberHeartbeat | Decision:
    """The coordinator heartbeat a classic member's JoinGroup stands for."""
    if req.protocol_type != CONSUMER_PROTOCOL_TYPE or not req.protocols:
        return Decision(
            [],
            ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
            "a consumer-protocol group takes only consumers (protocol type 'consumer')",
        )
    if not MIN_SESSION_TIMEOUT_MS <= req.session_timeout_ms <= MAX_SESSION_TIMEOUT_MS:
        return Decision(
            [],
            ErrorCode.INVALID_SESSION_TIMEOUT,
            f"session timeout must be in [{MIN_SESSION_TIMEOUT_MS}, {MAX_SESSION_TIMEOUT_MS}]",
        )
    chosen = req.protocols[0]
    subscription = decode_subscription(chosen.metadata)
    if subscription is None:
        return Decision([], ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "unreadable subscription")
    owned: set[TopicPartitionId] = set()
    for topic, partitions in subscription.owned:
        topic_id = state.topic_ids.get(topic)
        if topic_id is not None:
            owned.update((topic_id, p) for p in partitions)
    group = state.groups.group(req.group_id)
    known = group is not None and member_id in group.members
    return MemberHeartbeat(
        req.group_id,
        member_id,
        not known,
        req.client_id,
        req.client_host,
        tuple(subscription.topics),
        None,
        req.session_timeout_ms,
        "",
        req.group_instance_id,
        frozenset(owned),
        chosen.name,
    )


def classic_member(
    state: MetadataState, group_id: str, member_id: str, generation: int
) -> MemberState | ErrorCode:
    """The member a SyncGroup or Heartbeat names, or the error Kafka answers."""
    group = state.groups.group(group_id)
    member = group.members.get(member_id) if group is not None else None
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if generation != member.generation:
        return ErrorCode.ILLEGAL_GENERATION
    return member


def must_rejoin(state: MetadataState, group_id: str, member: MemberState) -> bool:
    """Partitions to release or to receive: the member must join again."""
    group = state.groups.group(group_id)
    target = group.target.get(member.member.member_id, frozenset()) if group else frozenset()
    return member.owned != target


def assignment_bytes(state: MetadataState, group_id: str, member: MemberState) -> bytes:
    """What a SyncGroup answers: the owned partitions of the member's target."""
    group = state.groups.group(group_id)
    target = group.target.get(member.member.member_id, frozenset()) if group else frozenset()
    by_topic: dict[str, list[int]] = {}
    for topic_id, p in sorted(member.owned & target):
        topic = state.topics.get(topic_id)
        if topic is not None:
            by_topic.setdefault(topic.name, []).append(p)
    return encode_assignment(sorted(by_topic.items()))
