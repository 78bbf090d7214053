"""Request and response bodies of the data-path and admin apis.

Each request and response is a frozen dataclass; :mod:`rillet.wire.schema` encodes and
validates them. Partition-level lists are flat (topic and partition on every entry), which
keeps handlers and clients simple. Record sets are :data:`~rillet.wire.schema.Blob` fields, so
they travel as raw bytes after the CBOR header.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rillet.wire import acl_messages as am
from rillet.wire import broker_admin_messages as bam
from rillet.wire import classic_group_messages as cgm
from rillet.wire import feature_messages as fm
from rillet.wire import group_messages as gm
from rillet.wire import leader_epoch_messages as lem
from rillet.wire import log_dir_messages as ldm
from rillet.wire import producer_admin_messages as pam
from rillet.wire import raft_voter_messages as rvm
from rillet.wire import reassignment_messages as ram
from rillet.wire import record_deletion_messages as rdm
from rillet.wire import sasl_messages as sm
from rillet.wire import transaction_messages as tm
from rillet.wire import user_messages as um
from rillet.wire.api import ApiKey
from rillet.wire.cluster_messages import (
    AllocateProducerIdsRequest,
    AlterPartitionRequest,
    BrokerHeartbeatRequest,
    BrokerRegistrationRequest,
    DescribeQuorumRequest,
    MetadataFetchRequest,
    NodeAuthBeginRequest,
    NodeAuthProveRequest,
)
from rillet.wire.forwarding import ForwardedFor
from rillet.wire.request import Request, response_type_of
from rillet.wire.schema import Blob

# -- Produce -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProducePartitionData:
    topic: str
    partition: int
    records: Blob


@dataclass(frozen=True, slots=True)
class ProduceRequest(Request["ProduceResponse"]):
    """acks: 0 (no response), 1 (leader appended), -1 (all in-sync replicas have it)."""

    acks: int
    timeout_ms: int
    partitions: list[ProducePartitionData]
    transactional_id: str | None = None  # a transactional producer's (docs/transactions.md)


@dataclass(frozen=True, slots=True)
class ProducePartitionResponse:
    topic: str
    partition: int
    error_code: int
    base_offset: int = -1
    log_append_time_ms: int = -1
    log_start_offset: int = -1
    error_message: str | None = None
    # INVALID_RECORD: the records that caused it, by index in the batch (Kafka's
    # record_errors, KIP-467): a client fails those and retries none of the others.
    invalid_records: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ProduceResponse:
    partitions: list[ProducePartitionResponse]


# -- Fetch -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FetchPartition:
    topic: str
    partition: int
    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    log_start_offset: int = -1  # a follower's own log start (DeleteRecords waits for it)


@dataclass(frozen=True, slots=True)
class FetchForgotten:
    """A partition an incremental follower fetch no longer asks for."""

    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class FetchRequest(Request["FetchResponse"]):
    """Long poll: answer once ``min_bytes`` are available or ``max_wait_ms`` has passed.

    A follower's fetch may be ``incremental``: it names only the partitions whose position
    changed since its previous fetch on this connection was answered, and ``forgotten``
    those it stopped following (the fetch session; docs/many-partitions.md)."""

    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    partitions: list[FetchPartition]
    replica_id: int = -1  # a follower broker's id; -1 for consumers
    replica_auth: bytes = b""  # a follower's proof of the cluster secret (cluster_auth)
    incremental: bool = False
    forgotten: list[FetchForgotten] = field(default_factory=list)
    # 0 read_uncommitted: up to the high watermark; 1 read_committed: up to the last stable
    # offset, with the aborted transactions of the range (docs/transactions.md).
    isolation_level: int = 0


READ_UNCOMMITTED = 0
READ_COMMITTED = 1


@dataclass(frozen=True, slots=True)
class AbortedTransaction:
    """A transaction aborted in a read_committed fetch's range: drop this producer's
    batches from ``first_offset`` on until its abort marker (Kafka's FetchResponse entry)."""

    producer_id: int
    first_offset: int


@dataclass(frozen=True, slots=True)
class FetchPartitionResponse:
    topic: str
    partition: int
    error_code: int
    high_watermark: int
    log_start_offset: int
    records: Blob
    log_end_offset: int = -1
    diverging_epoch: int = -1
    diverging_end_offset: int = -1
    leader_id: int = -1
    leader_epoch: int = -1
    last_stable_offset: int = -1  # -1 in answers to followers
    aborted_transactions: list[AbortedTransaction] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FetchResponse:
    """To an incremental follower fetch, only the partitions with news (records, an error,
    a new high watermark, log start, log end or leader epoch)."""

    partitions: list[FetchPartitionResponse]
    error_code: int = 0  # FETCH_SESSION_ID_NOT_FOUND: send a full fetch


# -- ListOffsets -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListOffsetsPartition:
    """timestamp: -2 earliest, -1 latest, else the first offset with a timestamp >= it."""

    topic: str
    partition: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class ListOffsetsRequest(Request["ListOffsetsResponse"]):
    partitions: list[ListOffsetsPartition]
    # 1 read_committed: "latest" (-1) is the last stable offset, not the high watermark.
    isolation_level: int = 0


@dataclass(frozen=True, slots=True)
class ListOffsetsPartitionResponse:
    topic: str
    partition: int
    error_code: int
    offset: int = -1
    timestamp_ms: int = -1


@dataclass(frozen=True, slots=True)
class ListOffsetsResponse:
    partitions: list[ListOffsetsPartitionResponse]


# -- Metadata ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MetadataRequest(Request["MetadataResponse"]):
    """topics None means all topics.

    ``min_metadata_offset``: the highest metadata log offset the client has seen (in a
    CreateTopics, DeleteTopics or Metadata answer). A node that has not applied it yet waits
    (bounded) until it has, so a client never reads metadata older than a change it was told
    about, whichever node it asks. -1: answer from whatever is applied.
    """

    topics: list[str] | None = None
    min_metadata_offset: int = -1
    # A named topic that does not exist is created, when the node's
    # auto.create.topics.enable is on (Kafka's Metadata flag; off by default, so an older
    # client's lookups stay lookups).
    allow_auto_topic_creation: bool = False


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    partition: int
    leader_id: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    name: str
    error_code: int
    partitions: list[PartitionMetadata]
    configs: dict[str, str] = field(default_factory=dict)
    error_message: str | None = None  # why the topic is not answered (an error code's reason)
    topic_id: str = ""  # the topic's UUID (Kafka's Metadata v10+ and consumer protocol)


@dataclass(frozen=True, slots=True)
class MetadataResponse:
    cluster_id: str
    controller_id: int
    brokers: list[BrokerInfo]
    topics: list[TopicMetadata]
    metadata_offset: int = -1  # the metadata log offset this answer reflects
    # The answering node's largest batch for topics without their own max.message.bytes
    # (-1: not told), so a producer's batches stay under a limit lowered node-wide.
    max_batch_bytes: int = -1


# -- CreateTopics / DeleteTopics ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NewTopic:
    name: str
    num_partitions: int
    replication_factor: int = 1
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CreateTopicsRequest(Request["CreateTopicsResponse"]):
    topics: list[NewTopic]
    timeout_ms: int = 30_000
    validate_only: bool = False
    forwarded: bool = False  # sent by a node to the controller: never forwarded again
    # Chosen by the client once per operation and kept across its retries: the controller
    # answers a retry of a create it already carried out with success, not TOPIC_ALREADY_EXISTS.
    request_id: str = ""
    forwarded_for: ForwardedFor | None = None  # set by the node that forwards it


@dataclass(frozen=True, slots=True)
class PartitionCount:
    """A topic and the number of partitions it should have (only more than it has)."""

    name: str
    count: int


@dataclass(frozen=True, slots=True)
class CreatePartitionsRequest(Request["CreatePartitionsResponse"]):
    """Grow topics to ``count`` partitions each. Forwarded to the controller like
    CreateTopics; answered once this node hosts what the controller decided."""

    topics: list[PartitionCount]
    timeout_ms: int = 30_000
    validate_only: bool = False
    forwarded: bool = False
    request_id: str = ""
    forwarded_for: ForwardedFor | None = None  # set by the node that forwards it


@dataclass(frozen=True, slots=True)
class TopicResult:
    name: str
    error_code: int
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class TopicConfigChange:
    """New values for ``set`` keys, defaults again for ``delete`` keys; with ``replace`` the
    topic's overrides become exactly ``set`` (Kafka's AlterConfigs). ``append`` and
    ``subtract`` add items to or remove them from a list setting's current value (Kafka's
    APPEND and SUBTRACT; comma-separated items)."""

    name: str
    set: dict[str, str] = field(default_factory=dict)
    delete: list[str] = field(default_factory=list)
    replace: bool = False
    append: dict[str, str] = field(default_factory=dict)
    subtract: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AlterTopicConfigsRequest(Request["AlterTopicConfigsResponse"]):
    """Change topics' config overrides at run time (forwarded to the controller like
    CreateTopics; the new values apply on every node without a restart)."""

    topics: list[TopicConfigChange]
    timeout_ms: int = 30_000
    validate_only: bool = False
    forwarded: bool = False
    request_id: str = ""
    forwarded_for: ForwardedFor | None = None  # set by the node that forwards it


@dataclass(frozen=True, slots=True)
class AlterTopicConfigsResponse:
    topics: list[TopicResult]
    metadata_offset: int = -1


@dataclass(frozen=True, slots=True)
class CreatePartitionsResponse:
    topics: list[TopicResult]
    metadata_offset: int = -1  # as CreateTopicsResponse


@dataclass(frozen=True, slots=True)
class CreateTopicsResponse:
    topics: list[TopicResult]
    # The metadata log offset at which the changes are applied; clients send it back as
    # MetadataRequest.min_metadata_offset. -1 when unknown.
    metadata_offset: int = -1


@dataclass(frozen=True, slots=True)
class DeleteTopicsRequest(Request["DeleteTopicsResponse"]):
    topics: list[str]
    timeout_ms: int = 30_000
    forwarded: bool = False  # sent by a node to the controller: never forwarded again
    request_id: str = ""  # as CreateTopicsRequest.request_id: a retried delete succeeds
    forwarded_for: ForwardedFor | None = None  # set by the node that forwards it


@dataclass(frozen=True, slots=True)
class DeleteTopicsResponse:
    topics: list[TopicResult]
    metadata_offset: int = -1  # as CreateTopicsResponse.metadata_offset


# -- InitProducerId ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InitProducerIdRequest(Request["InitProducerIdResponse"]):
    """An idempotent producer asks for its producer id and epoch; a transactional one (with
    ``transactional_id``) asks its coordinator, which fences the id's earlier instances. A
    producer that had an id sends it (KIP-360) in ``producer_id``/``producer_epoch``."""

    transactional_id: str | None = None
    transaction_timeout_ms: int = -1
    producer_id: int = -1
    producer_epoch: int = -1


@dataclass(frozen=True, slots=True)
class InitProducerIdResponse:
    error_code: int
    producer_id: int = -1
    producer_epoch: int = -1
    error_message: str | None = None


# -- ApiVersions -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ApiVersionsRequest(Request["ApiVersionsResponse"]):
    pass


@dataclass(frozen=True, slots=True)
class ApiVersionRange:
    api: int
    min_version: int
    max_version: int


@dataclass(frozen=True, slots=True)
class ApiVersionsResponse:
    apis: list[ApiVersionRange]


# Each api's request class; its response class is the one it names in ``Request[R]``.
REQUESTS: dict[ApiKey, type[Request[object]]] = {
    ApiKey.PRODUCE: ProduceRequest,
    ApiKey.FETCH: FetchRequest,
    ApiKey.LIST_OFFSETS: ListOffsetsRequest,
    ApiKey.METADATA: MetadataRequest,
    ApiKey.CREATE_TOPICS: CreateTopicsRequest,
    ApiKey.DELETE_TOPICS: DeleteTopicsRequest,
    ApiKey.DELETE_RECORDS: rdm.DeleteRecordsRequest,
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: um.DescribeUserScramCredentialsRequest,
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: um.AlterUserScramCredentialsRequest,
    ApiKey.SASL_HANDSHAKE: sm.SaslHandshakeRequest,
    ApiKey.SASL_AUTHENTICATE: sm.SaslAuthenticateRequest,
    ApiKey.CREATE_ACLS: am.CreateAclsRequest,
    ApiKey.DESCRIBE_ACLS: am.DescribeAclsRequest,
    ApiKey.DELETE_ACLS: am.DeleteAclsRequest,
    ApiKey.CREATE_PARTITIONS: CreatePartitionsRequest,
    ApiKey.INCREMENTAL_ALTER_CONFIGS: AlterTopicConfigsRequest,
    ApiKey.API_VERSIONS: ApiVersionsRequest,
    ApiKey.INIT_PRODUCER_ID: InitProducerIdRequest,
    ApiKey.ADD_PARTITIONS_TO_TXN: tm.AddPartitionsToTxnRequest,
    ApiKey.END_TXN: tm.EndTxnRequest,
    ApiKey.ADD_OFFSETS_TO_TXN: tm.AddOffsetsToTxnRequest,
    ApiKey.TXN_OFFSET_COMMIT: tm.TxnOffsetCommitRequest,
    ApiKey.DESCRIBE_TRANSACTIONS: tm.DescribeTransactionsRequest,
    ApiKey.LIST_TRANSACTIONS: tm.ListTransactionsRequest,
    ApiKey.TXN_MARKERS_WRITTEN: tm.TxnMarkersWrittenRequest,
    ApiKey.DESCRIBE_PRODUCERS: pam.DescribeProducersRequest,
    ApiKey.WRITE_TXN_MARKERS: pam.WriteTxnMarkersRequest,
    ApiKey.OFFSET_FOR_LEADER_EPOCH: lem.OffsetForLeaderEpochRequest,
    ApiKey.DESCRIBE_QUORUM: DescribeQuorumRequest,
    ApiKey.ADD_RAFT_VOTER: rvm.AddRaftVoterRequest,
    ApiKey.REMOVE_RAFT_VOTER: rvm.RemoveRaftVoterRequest,
    ApiKey.OBSERVE_RAFT: rvm.ObserveRaftRequest,
    ApiKey.DESCRIBE_LOG_DIRS: ldm.DescribeLogDirsRequest,
    ApiKey.ALTER_REPLICA_LOG_DIRS: ldm.AlterReplicaLogDirsRequest,
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: ram.AlterReassignmentsRequest,
    ApiKey.LIST_PARTITION_REASSIGNMENTS: ram.ListReassignmentsRequest,
    ApiKey.ELECT_LEADERS: ram.ElectLeadersRequest,
    ApiKey.UPDATE_FEATURES: fm.UpdateFeaturesRequest,
    ApiKey.ALTER_BROKER_CONFIGS: bam.AlterBrokerConfigsRequest,
    ApiKey.UNREGISTER_BROKER: bam.UnregisterBrokerRequest,
    ApiKey.BROKER_REGISTRATION: BrokerRegistrationRequest,
    ApiKey.BROKER_HEARTBEAT: BrokerHeartbeatRequest,
    ApiKey.METADATA_FETCH: MetadataFetchRequest,
    ApiKey.ALTER_PARTITION: AlterPartitionRequest,
    ApiKey.ALLOCATE_PRODUCER_IDS: AllocateProducerIdsRequest,
    ApiKey.NODE_AUTH_BEGIN: NodeAuthBeginRequest,
    ApiKey.NODE_AUTH_PROVE: NodeAuthProveRequest,
    ApiKey.FIND_COORDINATOR: gm.FindCoordinatorRequest,
    ApiKey.CONSUMER_GROUP_HEARTBEAT: gm.ConsumerGroupHeartbeatRequest,
    ApiKey.LEAVE_GROUP: gm.LeaveGroupRequest,
    ApiKey.OFFSET_COMMIT: gm.OffsetCommitRequest,
    ApiKey.OFFSET_FETCH: gm.OffsetFetchRequest,
    ApiKey.LIST_GROUPS: gm.ListGroupsRequest,
    ApiKey.DESCRIBE_GROUPS: gm.DescribeGroupsRequest,
    ApiKey.DELETE_GROUPS: gm.DeleteGroupsRequest,
    ApiKey.OFFSET_DELETE: gm.DeleteGroupOffsetsRequest,
    ApiKey.JOIN_GROUP: cgm.ClassicJoinGroupRequest,
    ApiKey.SYNC_GROUP: cgm.ClassicSyncGroupRequest,
    ApiKey.HEARTBEAT: cgm.ClassicHeartbeatRequest,
    ApiKey.CLASSIC_LEAVE_GROUP: cgm.ClassicLeaveGroupRequest,
    ApiKey.CLASSIC_DESCRIBE_GROUPS: cgm.ClassicDescribeGroupsRequest,
    ApiKey.CLASSIC_LIST_GROUPS: cgm.ClassicListGroupsRequest,
}
REQUEST_TYPES: dict[ApiKey, tuple[type, type]] = {
    api: (request, response_type_of(request)) for api, request in REQUESTS.items()
}
API_OF_REQUEST: dict[type, ApiKey] = {req: api for api, (req, _) in REQUEST_TYPES.items()}
