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


@dataclass(frozen=True, slots=True)
class TxnMarkersWrittenResponse:
    error_code: int
    error_message: str | None = None
