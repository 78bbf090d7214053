"""Bodies of the classic consumer-group apis (JoinGroup, SyncGroup, Heartbeat, LeaveGroup),
shaped like Kafka's so a Kafka-protocol front end maps them field for field.

In the classic protocol the coordinator only runs the membership: every member sends
JoinGroup with the assignment protocols it supports (a name such as ``range`` and opaque
subscription bytes per protocol); the coordinator picks one protocol all members support,
elects a leader member and hands the leader every member's subscription. The leader computes
the assignment itself and sends it in SyncGroup; the other members receive their part from
SyncGroup. Generations fence members from an earlier round. docs/consumer-groups.md
("Classic groups") describes the rules.

The DescribeGroups and ListGroups bodies here are Kafka-shaped too (group state names,
protocol type, raw member metadata and assignment bytes) and cover both kinds of groups.
Offset commits of classic members use the ordinary OffsetCommit (``group_messages``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rillet.wire.request import Request

# Kafka's group states, as Kafka names them (DescribeGroups, ListGroups).
EMPTY = "Empty"
PREPARING_REBALANCE = "PreparingRebalance"
COMPLETING_REBALANCE = "CompletingRebalance"
STABLE = "Stable"
DEAD = "Dead"

CONSUMER_PROTOCOL_TYPE = "consumer"

# -- JoinGroup ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClassicProtocol:
    """One assignment protocol a member supports, in the member's order of preference."""

    name: str
    metadata: bytes  # the member's subscription, opaque to the coordinator


@dataclass(frozen=True, slots=True)
class ClassicJoinGroupRequest(Request["ClassicJoinGroupResponse"]):
    """A (re)join. ``member_id`` "" for a new member: with ``require_known_member_id`` (Kafka
    JoinGroup v4+) the answer is MEMBER_ID_REQUIRED with a member id to join again with.

    Held by the coordinator until the round completes: every known member rejoined, or the
    rebalance timeout passed.
    """

    group_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    member_id: str
    group_instance_id: str | None
    protocol_type: str
    protocols: list[ClassicProtocol]
    client_id: str = ""
    client_host: str = ""
    require_known_member_id: bool = True


@dataclass(frozen=True, slots=True)
class ClassicJoinedMember:
    """A member as the leader sees it: its subscription for the chosen protocol."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True, slots=True)
class ClassicJoinGroupResponse:
    """``members`` is filled for the leader only (``leader_id == member_id``)."""

    error_code: int
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = ""
    member_id: str = ""
    members: list[ClassicJoinedMember] = field(default_factory=list)
    error_message: str | None = None


# -- SyncGroup ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClassicMemberAssignment:
    member_id: str
    assignment: bytes  # opaque to the coordinator


@dataclass(frozen=True, slots=True)
class ClassicSyncGroupRequest(Request["ClassicSyncGroupResponse"]):
    """The leader sends everyone's assignment; other members send an empty list and wait
    for the leader's."""

    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None
    protocol_type: str | None = None  # checked against the group's when given (Kafka v5)
    protocol_name: str | None = None
    assignments: list[ClassicMemberAssignment] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ClassicSyncGroupResponse:
    error_code: int
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""
    error_message: str | None = None


# -- Heartbeat ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClassicHeartbeatRequest(Request["ClassicHeartbeatResponse"]):
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True)
class ClassicHeartbeatResponse:
    """REBALANCE_IN_PROGRESS tells the member to rejoin."""

    error_code: int
    error_message: str | None = None


# -- LeaveGroup --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClassicLeavingMember:
    """``member_id`` "" with an instance id removes a static member by its instance id."""

    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True)
class ClassicLeaveGroupRequest(Request["ClassicLeaveGroupResponse"]):
    group_id: str
    members: list[ClassicLeavingMember]


@dataclass(frozen=True, slots=True)
class ClassicLeftMember:
    member_id: str
    group_instance_id: str | None
    error_code: int


@dataclass(frozen=True, slots=True)
class ClassicLeaveGroupResponse:
    """Kafka LeaveGroup v0-v2 carry one member: its error is the top-level one there."""

    error_code: int
    members: list[ClassicLeftMember] = field(default_factory=list)
    error_message: str | None = None


# -- DescribeGroups / ListGroups (Kafka-shaped, both kinds of groups) ------------------------


@dataclass(frozen=True, slots=True)
class ClassicDescribeGroupsRequest(Request["ClassicDescribeGroupsResponse"]):
    group_ids: list[str]


@dataclass(frozen=True, slots=True)
class ClassicDescribedMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    member_metadata: bytes  # the subscription for the group's protocol
    member_assignment: bytes  # empty until the group is Stable


@dataclass(frozen=True, slots=True)
class ClassicGroupDescription:
    """An unknown group is Dead with error NONE, as in Kafka."""

    error_code: int
    group_id: str
    group_state: str
    protocol_type: str
    protocol_data: str  # the chosen protocol's name ("" while none is chosen)
    members: list[ClassicDescribedMember] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ClassicDescribeGroupsResponse:
    groups: list[ClassicGroupDescription]


@dataclass(frozen=True, slots=True)
class ClassicListGroupsRequest(Request["ClassicListGroupsResponse"]):
    states_filter: list[str] = field(default_factory=list)  # empty: every state


@dataclass(frozen=True, slots=True)
class ClassicListedGroup:
    group_id: str
    protocol_type: str
    group_state: str


@dataclass(frozen=True, slots=True)
class ClassicListGroupsResponse:
    error_code: int
    groups: list[ClassicListedGroup] = field(default_factory=list)
