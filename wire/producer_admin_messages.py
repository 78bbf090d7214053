"""The partition leaders' producer apis that Kafka's admin tools use (docs/transactions.md):
DescribeProducers (61), the producers a partition knows and their open transactions, and
WriteTxnMarkers (27) as ``kafka-transactions abort`` sends it, a marker written by a partition
leader on an administrator's word (a hanging transaction the coordinator does not know)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rillet.wire.request import Request
from rillet.wire.transaction_messages import TxnPartitionResult, TxnTopicPartition


@dataclass(frozen=True, slots=True)
class ActiveProducer:
    producer_id: int
    producer_epoch: int
    last_sequence: int = -1
    last_timestamp_ms: int = -1
    coordinator_epoch: int = -1
    current_txn_start_offset: int = -1  # -1: no transaction open here


@dataclass(frozen=True, slots=True)
class PartitionProducers:
    topic: str
    partition: int
    error_code: int
    producers: list[ActiveProducer] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class DescribeProducersRequest(Request["DescribeProducersResponse"]):
    partitions: list[TxnTopicPartition]


@dataclass(frozen=True, slots=True)
class DescribeProducersResponse:
    partitions: list[PartitionProducers]


@dataclass(frozen=True, slots=True)
class TxnMarkerSpec:
    """One marker to write into each of ``partitions`` (those this node leads)."""

    producer_id: int
    producer_epoch: int
    committed: bool
    coordinator_epoch: int
    partitions: list[TxnTopicPartition]


@dataclass(frozen=True, slots=True)
class WriteTxnMarkersRequest(Request["WriteTxnMarkersResponse"]):
    markers: list[TxnMarkerSpec]


@dataclass(frozen=True, slots=True)
class MarkerResult:
    producer_id: int
    results: list[TxnPartitionResult]


@dataclass(frozen=True, slots=True)
class WriteTxnMarkersResponse:
    markers: list[MarkerResult]
