"""The classic-group registry: the durable part of every classic group, applied from
``classic_group_records`` on every node and part of the metadata snapshot.

A group's state (Kafka's names) follows from it alone: PreparingRebalance while a rebalance
is recorded as started, Empty without members, CompletingRebalance until the leader's
assignment for the current generation is recorded, Stable after. Held requests and session
deadlines are not here: they live on the controller (``classic_group_coordinator``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rillet.metadata_quorum.classic_group_records import (
    ClassicGroupJoined,
    ClassicGroupSynced,
    ClassicMember,
    ClassicMemberReplaced,
    ClassicMembersRemoved,
    ClassicProtocolEntry,
    ClassicRebalanceStarted,
)
from rillet.wire.classic_group_messages import (
    COMPLETING_REBALANCE,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)

ClassicGroupRecord = (
    ClassicGroupJoined
    | ClassicGroupSynced
    | ClassicRebalanceStarted
    | ClassicMemberReplaced
    | ClassicMembersRemoved
)


@dataclass(slots=True)
class ClassicMemberState:
    member: ClassicMember
    assignment: bytes = b""


@dataclass(slots=True)
class ClassicGroupState:
    group_id: str
    generation: int = 0
    protocol_type: str = ""
    protocol_name: str | None = None
    leader_id: str = ""
    members: dict[str, ClassicMemberState] = field(default_factory=dict)
    synced: bool = False  # the leader's assignment for this generation is recorded
    rebalancing: bool = False

    @property
    def phase(self) -> str:
        if self.rebalancing:
            return PREPARING_REBALANCE
        if not self.members:
            return EMPTY
        return STABLE if self.synced else COMPLETING_REBALANCE

    @property
    def in_use(self) -> bool:
        """Members hold the group (or are joining it): the other protocol may not."""
        return bool(self.members) or self.rebalancing

    def member_of_instance(self, instance_id: str) -> str | None:
        for mid, m in self.members.items():
            if m.member.group_instance_id == instance_id:
                return mid
        return None

    def max_rebalance_timeout_ms(self) -> int:
        return max((m.member.rebalance_timeout_ms for m in self.members.values()), default=0)


class ClassicGroupRegistry:
    def __init__(self) -> None:
        self.groups: dict[str, ClassicGroupState] = {}

    def group(self, group_id: str) -> ClassicGroupState | None:
        return self.groups.get(group_id)

    def apply(self, record: ClassicGroupRecord) -> None:
        match record:
            case ClassicGroupJoined():
                g = self.groups.setdefault(record.group_id, ClassicGroupState(record.group_id))
                if record.generation <= g.generation:
                    return  # generations only move forward
                g.generation = record.generation
                g.protocol_type = record.protocol_type
                g.protocol_name = record.protocol_name
                g.leader_id = record.leader_id
                g.members = {m.member_id: ClassicMemberState(m) for m in record.members}
                g.synced = False
                g.rebalancing = False
            case ClassicGroupSynced():
                g_synced = self.groups.get(record.group_id)
                if g_synced is not None and g_synced.generation == record.generation:
                    given = {a.member_id: a.assignment for a in record.assignments}
                    for mid, m in g_synced.members.items():
                        m.assignment = given.get(mid, b"")
                    g_synced.synced = True
            case ClassicRebalanceStarted():
                g = self.groups.setdefault(record.group_id, ClassicGroupState(record.group_id))
                if g.generation == record.generation:
                    g.rebalancing = True
            case ClassicMemberReplaced():
                g_static = self.groups.get(record.group_id)
                old = g_static.members.pop(record.old_member_id, None) if g_static else None
                if g_static is not None and old is not None:
                    new_id = record.member.member_id
                    g_static.members[new_id] = ClassicMemberState(record.member, old.assignment)
                    if g_static.leader_id == record.old_member_id:
                        g_static.leader_id = new_id
            case ClassicMembersRemoved():
                g_left = self.groups.get(record.group_id)
                if g_left is not None:
                    for mid in record.member_ids:
                        g_left.members.pop(mid, None)
                    if g_left.leader_id not in g_left.members:
                        g_left.leader_id = ""

    def delete(self, group_id: str) -> None:
        self.groups.pop(group_id, None)

    # -- snapshot -----------------------------------------------------------------------------

    def to_doc(self) -> list[Any]:
        return [
            [
                g.group_id,
                g.generation,
                g.protocol_type,
                g.protocol_name,
                g.leader_id,
                g.synced,
                g.rebalancing,
                [_member_doc(m) for _, m in sorted(g.members.items())],
            ]
            for _, g in sorted(self.groups.items())
        ]

    @classmethod
    def from_doc(cls, doc: list[Any]) -> ClassicGroupRegistry:
        reg = cls()
        for gid, generation, ptype, pname, leader, synced, rebalancing, members in doc:
            g = ClassicGroupState(
                str(gid), int(generation), str(ptype), pname, str(leader), {}, bool(synced)
            )
            g.rebalancing = bool(rebalancing)
            for m in members:
                state = _member_from_doc(m)
                g.members[state.member.member_id] = state
            reg.groups[g.group_id] = g
        return reg


def _member_doc(m: ClassicMemberState) -> list[Any]:
    mm = m.member
    return [
        mm.member_id,
        mm.group_instance_id,
        mm.client_id,
        mm.client_host,
        mm.session_timeout_ms,
        mm.rebalance_timeout_ms,
        [[p.name, p.metadata] for p in mm.protocols],
        m.assignment,
    ]


def _member_from_doc(doc: list[Any]) -> ClassicMemberState:
    mid, instance, client, host, session, rebalance, protocols, assignment = doc
    member = ClassicMember(
        str(mid),
        instance,
        str(client),
        str(host),
        int(session),
        int(rebalance),
        [ClassicProtocolEntry(str(n), bytes(md)) for n, md in protocols],
    )
    return ClassicMemberState(member, bytes(assignment))
