"""The transaction registry: every transactional id's state, kept in the metadata log.

Kafka keeps transaction state in the ``__transaction_state`` topic, one record per change;
here, like the group coordinator's, it is a metadata record (:class:`TransactionRecord`,
the whole state of one transactional id after the change) committed through the controller,
so every node holds the same registry and a new controller resumes unfinished transactions
(writes their markers again) from it. A record replaces the id's previous state;
:class:`TransactionRemoved` forgets an id (expired, ``transactional.id.expiration.ms``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from rillet.metadata_quorum.errors import MetadataRecordError
from rillet.wire.errors import WireError
from rillet.wire.schema import from_wire, to_wire


class TxnState(IntEnum):
    """Kafka's transaction states (TransactionState), by the same numbers."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def preparing(self) -> bool:
        """Markers are being written: the transaction is decided but not complete."""
        return self in _PREPARING

    @property
    def marker_commits(self) -> bool:
        return self is TxnState.PREPARE_COMMIT

    @property
    def kafka_name(self) -> str:
        """Kafka's name of the state (ListTransactions, DescribeTransactions, the tools)."""
        return "".join(word.capitalize() for word in self.name.split("_"))


_PREPARING = frozenset(
    {TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT, TxnState.PREPARE_EPOCH_FENCE}
)


@dataclass(frozen=True, slots=True)
class TxnPartition:
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class TxnOffset:
    """An offset a transaction commits for a group (TxnOffsetCommit): applied to the group
    when the transaction commits, dropped when it aborts."""

    group_id: str
    topic: str
    partition: int
    offset: int
    metadata: str = ""
    leader_epoch: int = -1  # Kafka's committed_leader_epoch (-1 in older records)


@dataclass(frozen=True, slots=True)
class TransactionRecord:
    """The state of one transactional id after a change (a metadata record).

    ``producer_epoch`` is the epoch the producer must use; ``last_producer_epoch`` the one
    before a bump (a retried InitProducerId of that epoch is recognised, KIP-360).
    ``started_ms`` dates the transaction for ``transaction.timeout.ms``; -1 when none runs.
    """

    transactional_id: str
    producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    timeout_ms: int
    state: int
    partitions: list[TxnPartition] = field(default_factory=list)
    group_ids: list[str] = field(default_factory=list)
    offsets: list[TxnOffset] = field(default_factory=list)
    started_ms: int = -1
    updated_ms: int = 0

    @property
    def txn_state(self) -> TxnState:
        return TxnState(self.state)


@dataclass(frozen=True, slots=True)
class TransactionRemoved:
    transactional_id: str


TxnRecord = TransactionRecord | TransactionRemoved


class TxnRegistry:
    """Transactional id -> its latest :class:`TransactionRecord` (pure: apply only)."""

    def __init__(self) -> None:
        self.transactions: dict[str, TransactionRecord] = {}

    def apply(self, record: TxnRecord) -> None:
        if isinstance(record, TransactionRemoved):
            self.transactions.pop(record.transactional_id, None)
        else:
            self.transactions[record.transactional_id] = record

    def get(self, transactional_id: str) -> TransactionRecord | None:
        return self.transactions.get(transactional_id)

    def to_doc(self) -> list[Any]:
        return [to_wire(r, []) for _, r in sorted(self.transactions.items())]

    @classmethod
    def from_doc(cls, doc: Any) -> TxnRegistry:
        registry = cls()
        try:
            for item in doc:
                registry.apply(from_wire(TransactionRecord, item, []))
        except WireError as exc:
            raise MetadataRecordError(f"unreadable transaction in a snapshot: {exc}") from None
        return registry
