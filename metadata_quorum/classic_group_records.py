"""Metadata records of classic (JoinGroup/SyncGroup) consumer groups.

What must survive a controller change is recorded: each completed join round (the new
generation with its members, their protocols and subscriptions, the chosen protocol and the
leader), the leader's assignment, the start of a rebalance, a static member's replacement and
removals. A new controller rebuilds every group from these and continues it: a group caught
mid-rebalance stays in that rebalance, and members re-send the requests the old controller
held. Offsets commit through the ordinary ``OffsetsCommitted`` record.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ClassicProtocolEntry:
    name: str
    metadata: bytes


@dataclass(frozen=True, slots=True)
class ClassicMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocols: list[ClassicProtocolEntry]  # the member's order of preference

    def metadata_for(self, protocol_name: str | None) -> bytes:
        for p in self.protocols:
            if p.name == protocol_name:
                return p.metadata
        return b""


@dataclass(frozen=True, slots=True)
class ClassicGroupJoined:
    """A join round completed: generation ``generation`` with exactly these members (none:
    the group is Empty). The group waits for the leader's assignment."""

    group_id: str
    generation: int
    protocol_type: str
    protocol_name: str | None
    leader_id: str
    members: list[ClassicMember] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ClassicAssignmentEntry:
    member_id: str
    assignment: bytes


@dataclass(frozen=True, slots=True)
class ClassicGroupSynced:
    """The leader's assignment for ``generation``: the group is Stable."""

    group_id: str
    generation: int
    assignments: list[ClassicAssignmentEntry] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ClassicRebalanceStarted:
    """Members must rejoin: the group is preparing generation ``generation`` + 1."""

    group_id: str
    generation: int


@dataclass(frozen=True, slots=True)
class ClassicMemberReplaced:
    """A static member came back under a new member id: it takes its predecessor's place,
    assignment and (if it had it) leadership; the old member id is fenced."""

    group_id: str
    old_member_id: str
    member: ClassicMember


@dataclass(frozen=True, slots=True)
class ClassicMembersRemoved:
    """Members left, missed their session or did not rejoin / sync in time."""

    group_id: str
    member_ids: list[str]
