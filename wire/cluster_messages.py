"""Bodies of the cluster-internal apis: broker registration, heartbeats, metadata fetch, and
the quorum description that ``rillet cluster status`` shows.

Brokers call these on a voter's listener. Every internal request carries the cluster id and a
proof of the cluster secret (``auth``, an HMAC of the cluster id under the secret): a node of
another cluster, or a process without the secret, is refused before anything is decided. A
voter that is not the active controller answers NOT_CONTROLLER with ``controller_id`` as a
hint, and the caller retries there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rillet.wire.forwarding import ForwardedFor
from rillet.wire.request import Request

# -- BrokerRegistration ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BrokerRegistrationRequest(Request["BrokerRegistrationResponse"]):
    """A broker (re)joins. ``incarnation_id`` is fresh per process start."""

    cluster_id: str
    auth: bytes
    broker_id: int
    incarnation_id: str
    host: str
    port: int
    rack: str | None = None
    # The broker's Kafka-protocol listener, when it runs one (port -1: none).
    kafka_host: str = ""
    kafka_port: int = -1
    # The highest cluster feature level this node supports (0: not stated, as nodes of
    # release 0.1.0 register; a controller of that release ignores the field).
    max_feature_level: int = 0


@dataclass(frozen=True, slots=True)
class BrokerRegistrationResponse:
    error_code: int
    controller_id: int = -1
    broker_epoch: int = -1
    error_message: str | None = None


# -- BrokerHeartbeat ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatRequest(Request["BrokerHeartbeatResponse"]):
    """Renews the broker's lease; ``caught_up`` asks to be unfenced, ``shutting_down`` to be
    fenced at once with its leaderships moved (controlled shutdown)."""

    cluster_id: str
    auth: bytes
    broker_id: int
    broker_epoch: int
    applied_index: int
    caught_up: bool
    shutting_down: bool = False
    # The last heartbeat answer this broker received (its answer_key and answered_ms): the
    # controller fences a broker that reaches it but hears nothing back.
    heard_answer_key: int = 0
    heard_answer_ms: int = -1
    max_feature_level: int = 0  # as in BrokerRegistrationRequest


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatResponse:
    error_code: int
    controller_id: int = -1
    fenced: bool = True
    error_message: str | None = None
    answer_key: int = 0  # the answering controller's, drawn per term (0: none)
    answered_ms: int = -1  # the controller's clock when it answered


# -- MetadataFetch -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MetadataFetchRequest(Request["MetadataFetchResponse"]):
    """Committed metadata records after ``after_index`` (long poll up to ``max_wait_ms``)."""

    cluster_id: str
    auth: bytes
    after_index: int
    max_records: int = 1000
    max_wait_ms: int = 500


@dataclass(frozen=True, slots=True)
class MetadataEntry:
    index: int
    term: int
    data: bytes


@dataclass(frozen=True, slots=True)
class MetadataFetchResponse:
    """Either entries after the requested index, or (when the log was compacted past it) a
    snapshot of the whole state at ``snapshot_index`` and the entries after that."""

    error_code: int
    entries: list[MetadataEntry] = field(default_factory=list)
    snapshot_index: int = 0
    snapshot_term: int = 0
    snapshot: bytes | None = None
    error_message: str | None = None


# -- AlterPartition ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AlterPartitionRequest(Request["AlterPartitionResponse"]):
    """A partition leader asks the controller for a new ISR, based on ``partition_epoch``
    (a stale one is refused: the leader retries from the newer committed state)."""

    cluster_id: str
    auth: bytes
    broker_id: int
    broker_epoch: int
    topic_id: str
    partition: int
    leader_epoch: int
    partition_epoch: int
    new_isr: list[int]


@dataclass(frozen=True, slots=True)
class AlterPartitionResponse:
    """The partition as committed after the decision (its ISR and epochs)."""

    error_code: int
    controller_id: int = -1
    isr: list[int] = field(default_factory=list)
    leader_epoch: int = -1
    partition_epoch: int = -1
    error_message: str | None = None


# -- AllocateProducerIds ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AllocateProducerIdsRequest(Request["AllocateProducerIdsResponse"]):
    """A broker asks the controller for a block of producer ids to hand out (KIP-730)."""

    cluster_id: str
    auth: bytes
    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class AllocateProducerIdsResponse:
    error_code: int
    controller_id: int = -1
    first_producer_id: int = -1
    block_size: int = 0
    error_message: str | None = None


# -- NodeAuthenticate (per-connection challenge-response) --------------------------------------


@dataclass(frozen=True, slots=True)
class NodeAuthBeginRequest(Request["NodeAuthBeginResponse"]):
    """A connection asks to act as node ``node_id``: the server answers a fresh nonce."""

    cluster_id: str
    node_id: int


@dataclass(frozen=True, slots=True)
class NodeAuthBeginResponse:
    error_code: int
    server_nonce: bytes = b""
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class NodeAuthProveRequest(Request["NodeAuthProveResponse"]):
    """The node's proof of the cluster secret over both nonces, its id and the cluster id."""

    client_nonce: bytes
    proof: bytes


@dataclass(frozen=True, slots=True)
class NodeAuthProveResponse:
    """The server's own proof (mutual): the node checks it before trusting the connection."""

    error_code: int
    server_proof: bytes = b""
    error_message: str | None = None


# -- DescribeQuorum ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DescribeQuorumRequest(Request["DescribeQuorumResponse"]):
    """``include_state_digest``: also hash the whole metadata state (tests and the chaos
    harness compare nodes by it; with thousands of partitions it costs the node a
    noticeable pause, so status checks leave it out).

    ``leader_view``: the Raft leader's view, wherever asked (Kafka's DescribeQuorum): a node
    that does not lead forwards the request there once (``forwarded``), naming the client
    it asks for (``forwarded_for``). Without it, the node asked answers its own view. A
    node of the previous release ignores these fields and answers its own view."""

    include_state_digest: bool = False
    leader_view: bool = False
    forwarded: bool = False  # sent by a node to the Raft leader: never forwarded again
    forwarded_for: ForwardedFor | None = None  # set by the node that forwards it


@dataclass(frozen=True, slots=True)
class BrokerStatus:
    broker_id: int
    host: str
    port: int
    broker_epoch: int
    fenced: bool
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class VoterState:
    """One voter as the leader sees it: its log end (the index after the last entry it
    shares with the leader), and the wall-clock times it was last heard from and last had
    the leader's whole log (-1: not known)."""

    voter_id: int
    log_end_offset: int
    last_fetch_ms: int
    last_caught_up_ms: int
    directory_id: str = ""  # its data directory's id (32 hex digits; "": not known)


@dataclass(frozen=True, slots=True)
class DescribeQuorumResponse:
    """This node's view: leader and term of the Raft quorum, its voters, the broker registry
    and the partitions without a leader, as of ``applied_index``."""

    error_code: int
    node_id: int
    leader_id: int
    term: int
    voters: list[int]
    applied_index: int
    brokers: list[BrokerStatus]
    topics: int
    partitions: int
    leaderless_partitions: list[str]
    state_sha256: str = ""  # of the canonical metadata snapshot: equal on nodes that agree
    error_message: str | None = None
    # The Raft leader's view of replication (empty elsewhere): Kafka's DescribeQuorum shows it.
    high_watermark: int = -1  # the leader's commit index
    voter_states: list[VoterState] = field(default_factory=list)
    # Replicas that receive the metadata log without voting (one being added), as above.
    observer_states: list[VoterState] = field(default_factory=list)
    directory_id: str = ""  # the answering node's Raft directory id ("": none)
