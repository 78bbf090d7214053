"""Metadata records of consumer groups: membership, target assignment, ownership, offsets.

Every change the group coordinator decides is one of these, committed through the metadata
log like broker and topic records, so any controller that takes over continues each group
exactly where the previous one left it (docs/consumer-groups.md). Partitions are named by
topic id, so a topic deleted and re-created under the same name never inherits old
ownership or offsets.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class TopicPartitions:
    topic_id: str
    partitions: list[int]


@dataclass(frozen=True, slots=True)
class GroupMember:
    """A member joined, or changed its subscription (``topics`` or a regex ``pattern``)."""

    group_id: str
    member_id: str
    client_id: str
    client_host: str
    topics: list[str]
    pattern: str | None
    session_timeout_ms: int
    assignor: str
    instance_id: str | None = None  # static membership: survives restarts of the member
    # A classic (JoinGroup) member of a consumer-protocol group: the protocol (Kafka
    # assignor) name it joined with; its assignment comes from the server-side assignor.
    classic_protocol: str | None = None


@dataclass(frozen=True, slots=True)
class GroupMemberRemoved:
    """A member left, was fenced (session expired) or was replaced by its static successor;
    whatever it owned is free for others."""

    group_id: str
    member_id: str


@dataclass(frozen=True, slots=True)
class GroupTargetAssignment:
    """A new generation: the assignor's target, member id -> partitions. Members converge on
    it through ownership changes (a partition moves only once its old owner released it)."""

    group_id: str
    generation: int
    assignor: str
    members: dict[str, list[TopicPartitions]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class GroupMemberOwned:
    """The partitions a member owns from now on (granted by the coordinator, or what remains
    after the member released some), and the generation it was told."""

    group_id: str
    member_id: str
    generation: int
    owned: list[TopicPartitions]


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    topic_id: str
    partition: int
    offset: int
    metadata: str = ""
    commit_time_ms: int = 0
    # Kafka's committed_leader_epoch (the epoch of the last record consumed); -1 when the
    # committer gave none, and in records written before it was kept.
    leader_epoch: int = -1


@dataclass(frozen=True, slots=True)
class OffsetsCommitted:
    group_id: str
    offsets: list[CommittedOffset]


@dataclass(frozen=True, slots=True)
class GroupOffsetsDeleted:
    """Some of a group's committed offsets are gone (Kafka's OffsetDelete: an operator's
    removal of a group's offsets for topics it no longer reads)."""

    group_id: str
    partitions: list[TopicPartitions]


@dataclass(frozen=True, slots=True)
class GroupDeleted:
    """The group and its committed offsets are gone (an operator's deletion of an empty
    group)."""

    group_id: str
