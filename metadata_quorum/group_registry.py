"""The consumer, ownership and offset registries: the group part of the metadata state.

Pure data applied from committed records (``group_records``), identical on every node that
applied the same log, and part of the metadata snapshot. Invariant kept by the coordinator
and checked by the tests: a partition is owned by at most one member of a group at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rillet.metadata_quorum.group_records import (
    GroupDeleted,
    GroupMember,
    GroupMemberOwned,
    GroupMemberRemoved,
    GroupOffsetsDeleted,
    GroupTargetAssignment,
    OffsetsCommitted,
    TopicPartitions,
)

TopicPartitionId = tuple[str, int]  # (topic id, partition)
GroupRecord = (
    GroupMember
    | GroupMemberRemoved
    | GroupTargetAssignment
    | GroupMemberOwned
    | OffsetsCommitted
    | GroupOffsetsDeleted
    | GroupDeleted
)


def to_set(parts: list[TopicPartitions]) -> frozenset[TopicPartitionId]:
    return frozenset((tp.topic_id, p) for tp in parts for p in tp.partitions)


def to_list(parts: frozenset[TopicPartitionId] | set[TopicPartitionId]) -> list[TopicPartitions]:
    by_topic: dict[str, list[int]] = {}
    for topic_id, p in sorted(parts):
        by_topic.setdefault(topic_id, []).append(p)
    return [TopicPartitions(t, ps) for t, ps in by_topic.items()]


@dataclass(slots=True)
class MemberState:
    member: GroupMember
    owned: frozenset[TopicPartitionId] = frozenset()
    generation: int = 0  # the generation this member was last told


@dataclass(slots=True)
class OffsetEntry:
    offset: int
    metadata: str
    commit_time_ms: int
    leader_epoch: int = -1


@dataclass(slots=True)
class GroupState:
    group_id: str
    generation: int = 0
    assignor: str = ""
    members: dict[str, MemberState] = field(default_factory=dict)
    target: dict[str, frozenset[TopicPartitionId]] = field(default_factory=dict)


class GroupRegistry:
    def __init__(self) -> None:
        self.groups: dict[str, GroupState] = {}
        self.offsets: dict[str, dict[TopicPartitionId, OffsetEntry]] = {}

    def group(self, group_id: str) -> GroupState | None:
        return self.groups.get(group_id)

    def apply(self, record: GroupRecord) -> None:
        match record:
            case GroupMember():
                joined = self.groups.setdefault(record.group_id, GroupState(record.group_id))
                current = joined.members.get(record.member_id)
                if current is None:
                    joined.members[record.member_id] = MemberState(record)
                else:
                    current.member = record
            case GroupMemberRemoved():
                left = self.groups.get(record.group_id)
                if left is not None:
                    left.members.pop(record.member_id, None)
                    left.target.pop(record.member_id, None)
            case GroupTargetAssignment():
                target = self.groups.setdefault(record.group_id, GroupState(record.group_id))
                target.generation = record.generation
                target.assignor = record.assignor
                target.target = {m: to_set(parts) for m, parts in record.members.items()}
            case GroupMemberOwned():
                owner = self.groups.get(record.group_id)
                member = owner.members.get(record.member_id) if owner is not None else None
                if member is not None:
                    member.owned = to_set(record.owned)
                    member.generation = record.generation
            case OffsetsCommitted():
                table = self.offsets.setdefault(record.group_id, {})
                for o in record.offsets:
                    table[(o.topic_id, o.partition)] = OffsetEntry(
                        o.offset, o.metadata, o.commit_time_ms, o.leader_epoch
                    )
            case GroupOffsetsDeleted():
                table = self.offsets.get(record.group_id, {})
                for key in to_set(record.partitions):
                    table.pop(key, None)
                if not table:
                    self.offsets.pop(record.group_id, None)
            case GroupDeleted():
                self.groups.pop(record.group_id, None)
                self.offsets.pop(record.group_id, None)

    def remove_topic(self, topic_id: str) -> None:
        """A topic was deleted: its offsets go, and so does any ownership of its partitions."""
        for table in self.offsets.values():
            for key in [k for k in table if k[0] == topic_id]:
                del table[key]
        for g in self.groups.values():
            for m in g.members.values():
                m.owned = frozenset(tp for tp in m.owned if tp[0] != topic_id)
            g.target = {
                member: frozenset(tp for tp in parts if tp[0] != topic_id)
                for member, parts in g.target.items()
            }

    # -- snapshot -----------------------------------------------------------------------------

    def to_doc(self) -> dict[str, Any]:
        groups = []
        for g in sorted(self.groups.values(), key=lambda g: g.group_id):
            members = []
            for mid, m in sorted(g.members.items()):
                mm = m.member
                members.append(
                    [
                        mid,
                        mm.client_id,
                        mm.client_host,
                        list(mm.topics),
                        mm.pattern,
                        mm.session_timeout_ms,
                        mm.assignor,
                        mm.instance_id,
                        sorted(m.owned),
                        m.generation,
                    ]
                )
            target = [[mid, sorted(parts)] for mid, parts in sorted(g.target.items())]
            groups.append([g.group_id, g.generation, g.assignor, members, target])
        offsets = [
            [
                gid,
                [
                    [t, p, e.offset, e.metadata, e.commit_time_ms, e.leader_epoch]
                    for (t, p), e in sorted(tab.items())
                ],
            ]
            for gid, tab in sorted(self.offsets.items())
        ]
        return {"groups": groups, "offsets": offsets}

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> GroupRegistry:
        reg = cls()
        for gid, generation, assignor, members, target in doc["groups"]:
            g = reg.groups[gid] = GroupState(gid, int(generation), str(assignor))
            for mid, client, host, topics, pattern, session, asg, inst, owned, gen in members:
                member = GroupMember(
                    gid, mid, client, host, list(topics), pattern, session, asg, inst
                )
                g.members[mid] = MemberState(
                    member, frozenset((t, int(p)) for t, p in owned), int(gen)
                )
            g.target = {mid: frozenset((t, int(p)) for t, p in parts) for mid, parts in target}
        for gid, entries in doc["offsets"]:
            # Snapshots written before the leader epoch was kept have five fields.
            reg.offsets[gid] = {
                (t, int(p)): OffsetEntry(int(o), str(md), int(ms), int(epoch[0]) if epoch else -1)
                for t, p, o, md, ms, *epoch in entries
            }
        return reg
