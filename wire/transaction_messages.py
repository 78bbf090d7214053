"""Transaction apis (docs/transactions.md): a transactional producer's requests to its
coordinator (the controller), and the partition leaders' report that markers are written."""

from __future__ import annotations

from dataclasses import dataclass, field

from rillet.wire.request import Request


@dataclass(frozen=True, slots=True)
class TxnTopicPartition:
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class TxnPartitionResult:
    topic: str
    partition: int
    error_code: int


@dataclass(frozen=True, slots=True)
class AddPartitionsToTxnRequest(Request["AddPartitionsToTxnResponse"]):
    """Add partitions to the producer's transaction (with ``verify_only``, KIP-890: only
    say whether they were added)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: list[TxnTopicPartition]
    verify_only: bool = False


@dataclass(frozen=True, slots=True)
class AddPartitionsToTxnResponse:
    error_code: int
    results: list[TxnPartitionResult] = field(default_factory=list)
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class EndTxnRequest(Request["EndTxnResponse"]):
    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool


@dataclass(frozen=True, slots=True)
class EndTxnResponse:
    error_code: int
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class TxnMarkersWrittenRequest(Request["TxnMarkersWrittenResponse"]):
    """A partition leader (``broker_id``) wrote, and committed, the markers of a decided
    transaction in these partitions: the controller completes it once all are written."""

    cluster_id: str
    auth: bytes
    broker_id: int
    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: list[TxnTopicPartition]
    # Which transaction of the producer (its start, as the metadata log has it): the id and
    # epoch stay the same from one transaction to the next, so a late report of the previous
    # one must not take partitions off this one's list. -1: not said (older nodes).
    started_ms: int = -1


@dataclass(frozen=True, slots=True)
class TxnMarkersWrittenResponse:
    error_code: int
    controller_id: int = -1  # with NOT_CONTROLLER: the hint
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class AddOffsetsToTxnRequest(Request["AddOffsetsToTxnResponse"]):
    """The transaction will commit offsets of ``group_id`` (then TxnOffsetCommit)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    group_id: str


@dataclass(frozen=True, slots=True)
class AddOffsetsToTxnResponse:
    error_code: int
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class TxnCommitOffset:
    topic: str
    partition: int
    offset: int
    metadata: str = ""
    leader_epoch: int = -1  # Kafka's committed_leader_epoch


@dataclass(frozen=True, slots=True)
class TxnOffsetCommitRequest(Request["TxnOffsetCommitResponse"]):
    """Offsets held in the transaction, applied to the group when it commits. A request naming
    the committing member (Kafka's v3, KIP-447) is fenced by the group's generation; one with
    ``member_id`` "" and ``generation`` -1 is not."""

    transactional_id: str
    group_id: str
    producer_id: int
    producer_epoch: int
    offsets: list[TxnCommitOffset]
    member_id: str = ""
    generation: int = -1
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True)
class TxnOffsetCommitResponse:
    error_code: int
    results: list[TxnPartitionResult] = field(default_factory=list)
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class TxnListing:
    transactional_id: str
    producer_id: int
    state: str  # Kafka's name: Empty, Ongoing, PrepareCommit, ...


@dataclass(frozen=True, slots=True)
class ListTransactionsRequest(Request["ListTransactionsResponse"]):
    """The coordinator's transactions (every other node answers none: the coordinator is
    the controller), filtered by state names and producer ids when given."""

    state_filters: list[str] = field(default_factory=list)
    producer_id_filters: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ListTransactionsResponse:
    error_code: int
    transactions: list[TxnListing] = field(default_factory=list)
    unknown_state_filters: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class TxnDescription:
    error_code: int
    transactional_id: str
    state: str = ""
    timeout_ms: int = 0
    start_ms: int = -1
    producer_id: int = -1
    producer_epoch: int = -1
    partitions: list[TxnTopicPartition] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class DescribeTransactionsRequest(Request["DescribeTransactionsResponse"]):
    transactional_ids: list[str]


@dataclass(frozen=True, slots=True)
class DescribeTransactionsResponse:
    transactions: list[TxnDescription]
