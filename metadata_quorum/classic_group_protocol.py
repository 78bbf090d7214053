"""Pure rules of the classic group protocol: checking a join, comparing what members
support, choosing the group's protocol.

The coordinator never reads subscriptions or assignments: a protocol is a name (``range``,
``roundrobin``, ``cooperative-sticky``, ...) with opaque bytes, and the group uses one that
every member supports, so the leader can run that assignor over everyone's subscription.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rillet.metadata_quorum.classic_group_records import ClassicMember, ClassicProtocolEntry
from rillet.metadata_quorum.classic_group_registry import ClassicGroupState
from rillet.wire.classic_group_messages import ClassicJoinGroupRequest, ClassicMemberAssignment
from rillet.wire.error_codes import ErrorCode

# Kafka's field is an int32: Kafka Streams asks for its maximum (max.poll.interval.ms).
MAX_REBALANCE_TIMEOUT_MS = 2**31 - 1


@dataclass(frozen=True, slots=True)
class ClassicGroupConfig:
    """Limits and timing of classic groups (Kafka's ``group.*`` broker settings)."""

    # Kafka's group.initial.rebalance.delay.ms: the first round of an empty group waits this
    # long for more members (0: answer as soon as every known member joined).
    initial_rebalance_delay_ms: int = 0
    min_session_timeout_ms: int = 1_000  # group.min.session.timeout.ms
    max_session_timeout_ms: int = 1_800_000  # group.max.session.timeout.ms
    max_size: int = 1_000  # group.max.size: members (and pending member ids) per group

    def __post_init__(self) -> None:
        if self.initial_rebalance_delay_ms < 0:
            raise ValueError("initial_rebalance_delay_ms must be >= 0")
        if not 0 < self.min_session_timeout_ms <= self.max_session_timeout_ms:
            raise ValueError("need 0 < min_session_timeout_ms <= max_session_timeout_ms")
        if self.max_size < 1:
            raise ValueError("max_size must be >= 1")


@dataclass(frozen=True, slots=True)
class Refusal:
    error: ErrorCode
    message: str


def check_join(req: ClassicJoinGroupRequest, config: ClassicGroupConfig) -> Refusal | None:
    """What is wrong with a join on its own, before looking at the group."""
    if not req.group_id:
        return Refusal(ErrorCode.INVALID_GROUP_ID, "the group id is empty")
    low, high = config.min_session_timeout_ms, config.max_session_timeout_ms
    if not low <= req.session_timeout_ms <= high:
        return Refusal(
            ErrorCode.INVALID_SESSION_TIMEOUT, f"session_timeout_ms must be in [{low}, {high}]"
        )
    if not 0 < req.rebalance_timeout_ms <= MAX_REBALANCE_TIMEOUT_MS:
        return Refusal(
            ErrorCode.INVALID_REQUEST,
            f"rebalance_timeout_ms must be in [1, {MAX_REBALANCE_TIMEOUT_MS}]",
        )
    if not req.protocol_type or not req.protocols:
        return Refusal(
            ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "a join needs a protocol type and protocols"
        )
    names = [p.name for p in req.protocols]
    if len(set(names)) != len(names) or not all(names):
        return Refusal(ErrorCode.INVALID_REQUEST, "protocol names must be unique and non-empty")
    if req.group_instance_id == "":
        return Refusal(ErrorCode.INVALID_REQUEST, "group_instance_id must not be empty")
    return None


def member_from_request(req: ClassicJoinGroupRequest, member_id: str) -> ClassicMember:
    return ClassicMember(
        member_id,
        req.group_instance_id,
        req.client_id,
        req.client_host,
        req.session_timeout_ms,
        req.rebalance_timeout_ms,
        [ClassicProtocolEntry(p.name, bytes(p.metadata)) for p in req.protocols],
    )


def same_protocols(a: ClassicMember, b: ClassicMember) -> bool:
    """The member supports the same protocols with the same subscriptions."""
    return a.protocols == b.protocols


def reassigns(g: ClassicGroupState, given: list[ClassicMemberAssignment]) -> bool:
    """A Stable group's leader synced an assignment other than the one in force (an empty
    list is a re-sent follower-style sync, not a new assignment)."""
    if not given:
        return False
    new = {a.member_id: bytes(a.assignment) for a in given}
    return any(new.get(mid, b"") != m.assignment for mid, m in g.members.items())


def common_protocols(members: Iterable[ClassicMember]) -> set[str] | None:
    """Protocol names every member supports; None for no members (anything goes)."""
    common: set[str] | None = None
    for m in members:
        names = {p.name for p in m.protocols}
        common = names if common is None else common & names
    return common


def supports(
    members: list[ClassicMember],
    group_protocol_type: str,
    protocol_type: str,
    joining: ClassicMember,
) -> bool:
    """A member may join when the group is empty, or it has the group's protocol type and
    supports at least one protocol every other member supports."""
    if not members:
        return True
    if protocol_type != group_protocol_type:
        return False
    common = common_protocols(members)
    return bool(common is None or common & {p.name for p in joining.protocols})


def select_protocol(members: list[ClassicMember]) -> str | None:
    """The protocol the group uses: among those every member supports, each member votes
    for the first in its own order of preference; most votes wins, ties go to the name
    that comes first in the first member's preference."""
    common = common_protocols(members)
    if not common:
        return None
    votes: dict[str, int] = {}
    for m in members:
        choice = next(p.name for p in m.protocols if p.name in common)
        votes[choice] = votes.get(choice, 0) + 1
    order = [p.name for p in members[0].protocols if p.name in common]
    return max(order, key=lambda name: (votes.get(name, 0), -order.index(name)))
