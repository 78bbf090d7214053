"""Bodies of the consumer-group apis: finding the coordinator, membership heartbeats,
leaving, offset commit and fetch, and listing / describing groups.

Clients name partitions by topic name; the coordinator maps names to topic ids. Membership
follows the heartbeat protocol of docs/consumer-groups.md: a member joins with a member id
of its own and no ``owned`` list, reports the partitions it owns in every heartbeat, and
owns exactly what the answer assigns (releasing anything else first).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rillet.wire.request import Request


@dataclass(frozen=True, slots=True)
class GroupTopicPartitions:
    topic: str
    partitions: list[int]
    topic_id: str = ""  # in DescribeGroups answers (Kafka's ConsumerGroupDescribe names both)


# -- FindCoordinator ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FindCoordinatorRequest(Request["FindCoordinatorResponse"]):
    key: str  # the group id
    key_type: int = 0  # 0: consumer group
    # Further keys of a batched Kafka FindCoordinator (v4+): one coordinator answers them
    # all; each is authorized like ``key``.
    more_keys: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FindCoordinatorResponse:
    error_code: int
    node_id: int = -1
    host: str = ""
    port: int = -1
    error_message: str | None = None


# -- ConsumerGroupHeartbeat --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConsumerGroupHeartbeatRequest(Request["ConsumerGroupHeartbeatResponse"]):
    group_id: str
    member_id: str  # made by the member (its first heartbeat joins); "" to be given one
    session_timeout_ms: int
    topics: list[str] = field(default_factory=list)
    pattern: str | None = None  # a regular expression over topic names (full match)
    assignor: str = ""  # "" for the group's (or the default, sticky)
    instance_id: str | None = None  # static membership
    client_host: str = ""
    owned: list[GroupTopicPartitions] | None = None  # None: joining
    # Kafka's ConsumerGroupHeartbeat (the Kafka listener sets these): the member's epoch
    # (0 joins, -1 leaves, -2 leaves for now as a static member; None: rillet's own
    # protocol above), topics named by topic id in ``owned`` and in the answer, and
    # ``owned`` / ``topics`` / ``pattern`` left out (None / keep_*) meaning "as last sent".
    member_epoch: int | None = None
    by_topic_id: bool = False
    keep_topics: bool = False
    keep_pattern: bool = False
    client_id: str = ""  # the Kafka request header's (what ConsumerGroupDescribe shows)


@dataclass(frozen=True, slots=True)
class ConsumerGroupHeartbeatResponse:
    error_code: int
    member_id: str = ""
    generation: int = -1
    heartbeat_interval_ms: int = 0
    assignment: list[GroupTopicPartitions] = field(default_factory=list)
    error_message: str | None = None


# -- LeaveGroup --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LeaveGroupRequest(Request["LeaveGroupResponse"]):
    group_id: str
    member_id: str


@dataclass(frozen=True, slots=True)
class LeaveGroupResponse:
    error_code: int
    error_message: str | None = None


# -- OffsetCommit / OffsetFetch ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OffsetCommitPartition:
    topic: str
    partition: int
    offset: int  # the next offset to consume
    metadata: str = ""
    leader_epoch: int = -1  # Kafka's committed_leader_epoch: of the last record consumed


@dataclass(frozen=True, slots=True)
class OffsetCommitRequest(Request["OffsetCommitResponse"]):
    """From a member (its id and generation), or with ``member_id`` "" from a tool while the
    group has no members."""

    group_id: str
    member_id: str
    generation: int
    offsets: list[OffsetCommitPartition]
    group_instance_id: str | None = None  # a classic static member's (FENCED_INSTANCE_ID)


@dataclass(frozen=True, slots=True)
class PartitionError:
    topic: str
    partition: int
    error_code: int


@dataclass(frozen=True, slots=True)
class OffsetCommitResponse:
    error_code: int
    partitions: list[PartitionError] = field(default_factory=list)
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class OffsetFetchGroup:
    """A further group of a batched Kafka OffsetFetch (v8+)."""

    group_id: str
    partitions: list[GroupTopicPartitions] | None = None  # None: every committed offset


@dataclass(frozen=True, slots=True)
class OffsetFetchRequest(Request["OffsetFetchResponse"]):
    group_id: str
    partitions: list[GroupTopicPartitions] | None = None  # None: every committed offset
    # Kafka's OffsetFetch v8+ asks for several groups at once: answered in ``more_groups``,
    # each authorized on its own.
    more_groups: list[OffsetFetchGroup] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FetchedOffset:
    topic: str
    partition: int
    offset: int  # -1: nothing committed
    metadata: str = ""
    commit_time_ms: int = -1
    leader_epoch: int = -1  # as committed (-1: not given)


@dataclass(frozen=True, slots=True)
class GroupOffsets:
    """The answer for one of a request's ``more_groups``."""

    group_id: str
    error_code: int
    offsets: list[FetchedOffset] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class OffsetFetchResponse:
    error_code: int
    offsets: list[FetchedOffset] = field(default_factory=list)
    error_message: str | None = None
    more_groups: list[GroupOffsets] = field(default_factory=list)


# -- ListGroups / DescribeGroups ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListGroupsRequest(Request["ListGroupsResponse"]):
    pass


@dataclass(frozen=True, slots=True)
class GroupListing:
    group_id: str
    members: int
    generation: int


@dataclass(frozen=True, slots=True)
class ListGroupsResponse:
    error_code: int
    groups: list[GroupListing] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class DescribeGroupsRequest(Request["DescribeGroupsResponse"]):
    group_ids: list[str]


@dataclass(frozen=True, slots=True)
class MemberDescription:
    member_id: str
    instance_id: str | None
    client_host: str
    topics: list[str]
    pattern: str | None
    owned: list[GroupTopicPartitions]
    target: list[GroupTopicPartitions]
    epoch: int = -1  # the generation the member was last told
    client_id: str = ""
    classic_protocol: str | None = None  # a classic (JoinGroup) member: its protocol name


@dataclass(frozen=True, slots=True)
class GroupDescription:
    group_id: str
    error_code: int
    generation: int = -1
    assignor: str = ""
    members: list[MemberDescription] = field(default_factory=list)
    classic: bool = False  # a classic (JoinGroup) group: members carry no partitions here


@dataclass(frozen=True, slots=True)
class DescribeGroupsResponse:
    groups: list[GroupDescription]


# -- DeleteGroups ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeleteGroupsRequest(Request["DeleteGroupsResponse"]):
    group_ids: list[str]


@dataclass(frozen=True, slots=True)
class DeletedGroup:
    group_id: str
    error_code: int
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class DeleteGroupsResponse:
    results: list[DeletedGroup] = field(default_factory=list)


# -- OffsetDelete ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeleteGroupOffsetsRequest(Request["DeleteGroupOffsetsResponse"]):
    """Remove a group's committed offsets of these partitions (refused per partition while
    the group's members read the topic)."""

    group_id: str
    partitions: list[GroupTopicPartitions]


@dataclass(frozen=True, slots=True)
class DeleteGroupOffsetsResponse:
    error_code: int  # the group's: GROUP_ID_NOT_FOUND, NOT_COORDINATOR, ...
    partitions: list[PartitionError] = field(default_factory=list)
    error_message: str | None = None
