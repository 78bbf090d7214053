"""A transactional producer's state machine (sans-I/O): which call is allowed when, what
request each step sends, and how each answer moves the state.

The states and error classes are those of Kafka's ``TransactionManager``:

* ``init_transactions`` (InitProducerId with the transactional id) fences every earlier
  producer of the id and gets this one its producer id and epoch: UNINITIALIZED ->
  READY.
* ``begin_transaction``: READY -> IN_TRANSACTION (local only). Each partition written in
  the transaction is added to it (AddPartitionsToTxn) before its first batch is sent; a
  group whose offsets the transaction commits is added with AddOffsetsToTxn.
* ``commit_transaction`` / ``abort_transaction`` (EndTxn) -> READY.

Errors are of three kinds. *Retriable* answers (the coordinator moved, is loading, or is
still completing the previous transaction: CONCURRENT_TRANSACTIONS) are for the driver to
send again. *Abortable* ones (a batch that failed, a topic or group the producer may not
use) leave the transaction unable to commit: it must be aborted, after which the producer
goes on. *Fatal* ones (fenced by a newer producer of the same id, not authorized for the
id) end the producer: every later call raises the same error.

The driver (transactions.py) does the I/O: it asks this class for a request, sends it,
and feeds the answer back; nothing here touches a socket or a clock.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rillet.client.errors import BrokerError, RilletError, error_for
from rillet.wire import transaction_messages as tm
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import InitProducerIdRequest, InitProducerIdResponse

TP = tuple[str, int]

# Kafka's producer default for transaction.timeout.ms.
DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000

# Answers the driver sends again (after finding the coordinator again for the first three).
RETRIABLE = frozenset(
    {
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_CONTROLLER,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.CONCURRENT_TRANSACTIONS,
        ErrorCode.REQUEST_TIMED_OUT,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_ENOUGH_REPLICAS,
    }
)
# Answers that end the producer (Kafka's fatal errors): it cannot go on under this id.
FATAL = frozenset(
    {
        ErrorCode.PRODUCER_FENCED,
        ErrorCode.INVALID_PRODUCER_EPOCH,
        ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        ErrorCode.TRANSACTION_COORDINATOR_FENCED,
        ErrorCode.INVALID_TXN_STATE,
        ErrorCode.INVALID_TRANSACTION_TIMEOUT,
        ErrorCode.UNSUPPORTED_VERSION,
    }
)


class TransactionStateError(RilletError):
    """A transactional call made in a state that does not allow it (begin twice, commit
    with no transaction, send outside a transaction)."""


class TransactionAbortableError(RilletError):
    """The current transaction cannot commit (a batch or a request of it failed): abort
    it, then begin the next. ``__cause__`` is the failure."""


class TxnState(enum.Enum):
    UNINITIALIZED = "uninitialized"
    INITIALIZING = "initializing"
    READY = "ready"
    IN_TRANSACTION = "in transaction"
    COMMITTING = "committing"
    ABORTING = "aborting"
    ABORTABLE_ERROR = "abortable error"
    FATAL_ERROR = "fatal error"


@dataclass(frozen=True, slots=True)
class GroupMetadata:
    """What ``send_offsets_to_transaction`` needs of the consumer (Kafka's
    ConsumerGroupMetadata): with a member id and generation the group fences a member a
    rebalance left behind (KIP-447); with the defaults it does not."""

    group_id: str
    generation: int = -1
    member_id: str = ""
    group_instance_id: str | None = None


def is_retriable(code: int) -> bool:
    return ErrorCode.from_wire(code) in RETRIABLE


class TransactionManager:
    """The state of one transactional id in this producer."""

    def __init__(self, transactional_id: str, transaction_timeout_ms: int) -> None:
        if not transactional_id:
            raise ValueError("transactional_id must not be empty")
        if transaction_timeout_ms <= 0:
            raise ValueError("transaction_timeout_ms must be positive")
        self.transactional_id = transactional_id
        self.timeout_ms = transaction_timeout_ms
        self.state = TxnState.UNINITIALIZED
        self.producer_id = -1
        self.producer_epoch = -1
        self.partitions: set[TP] = set()  # added to the current transaction
        self.groups: set[str] = set()  # groups added with AddOffsetsToTxn
        self.error: RilletError | None = None  # the abortable or fatal error
        self._new_epoch = False  # set by an abort after an abortable error

    # -- checks -------------------------------------------------------------------------------

    def _fail_if_fatal(self) -> None:
        if self.state is TxnState.FATAL_ERROR:
            assert self.error is not None
            raise self.error

    def _expect(self, what: str, *states: TxnState) -> None:
        self._fail_if_fatal()
        if self.state not in states:
            raise TransactionStateError(
                f"cannot {what} for transactional id {self.transactional_id!r} while "
                f"{self.state.value}"
            )

    def check_can_send(self) -> None:
        """``send`` is allowed only inside a transaction; after an abortable error it
        raises that error (the transaction must be aborted first)."""
        if self.state is TxnState.IN_TRANSACTION:
            return
        if self.state is TxnState.ABORTABLE_ERROR:
            raise self._abortable("send")
        self._expect("send", TxnState.IN_TRANSACTION)

    def _abortable(self, what: str) -> TransactionAbortableError:
        err = TransactionAbortableError(
            f"cannot {what}: the transaction must be aborted ({self.error})"
        )
        err.__cause__ = self.error
        return err

    # -- InitProducerId -----------------------------------------------------------------------

    def init_request(self) -> InitProducerIdRequest:
        self._expect("init transactions", TxnState.UNINITIALIZED, TxnState.INITIALIZING)
        self.state = TxnState.INITIALIZING
        return InitProducerIdRequest(self.transactional_id, self.timeout_ms)

    def init_answer(self, response: InitProducerIdResponse) -> None:
        """READY, or raise (fatal errors stay; retriable ones are the driver's)."""
        code = response.error_code
        if code == ErrorCode.NONE:
            self.producer_id = response.producer_id
            self.producer_epoch = response.producer_epoch
            self.state = TxnState.READY
            return
        raise self._failed(code, response.error_message, "InitProducerId")

    # -- the transaction ----------------------------------------------------------------------

    def begin(self) -> None:
        self._expect("begin a transaction", TxnState.READY)
        self.partitions.clear()
        self.groups.clear()
        self.error = None
        self.state = TxnState.IN_TRANSACTION

    def add_partitions_request(self, tps: list[TP]) -> tm.AddPartitionsToTxnRequest | None:
        """The request adding those of ``tps`` not in the transaction yet (None: all are)."""
        self.check_can_send()
        new = sorted(set(tps) - self.partitions)
        if not new:
            return None
        return tm.AddPartitionsToTxnRequest(
            self.transactional_id,
            self.producer_id,
            self.producer_epoch,
            [tm.TxnTopicPartition(t, p) for t, p in new],
        )

    def add_partitions_answer(
        self, request: tm.AddPartitionsToTxnRequest, response: tm.AddPartitionsToTxnResponse
    ) -> None:
        codes = [r.error_code for r in response.results if r.error_code != ErrorCode.NONE]
        if response.error_code != ErrorCode.NONE:
            codes.insert(0, response.error_code)
        if not codes:
            self.partitions.update((p.topic, p.partition) for p in request.partitions)
            return
        raise self._failed(codes[0], response.error_message, "AddPartitionsToTxn")

    def add_offsets_request(self, group: GroupMetadata) -> tm.AddOffsetsToTxnRequest | None:
        """AddOffsetsToTxn for ``group`` (None when the transaction has it already)."""
        if self.state is TxnState.ABORTABLE_ERROR:
            raise self._abortable("send offsets")
        self._expect("send offsets", TxnState.IN_TRANSACTION)
        if group.group_id in self.groups:
            return None
        return tm.AddOffsetsToTxnRequest(
            self.transactional_id, self.producer_id, self.producer_epoch, group.group_id
        )

    def add_offsets_answer(
        self, request: tm.AddOffsetsToTxnRequest, response: tm.AddOffsetsToTxnResponse
    ) -> None:
        if response.error_code == ErrorCode.NONE:
            self.groups.add(request.group_id)
            return
        raise self._failed(response.error_code, response.error_message, "AddOffsetsToTxn")

    def offset_commit_request(
        self, offsets: dict[TP, int], group: GroupMetadata
    ) -> tm.TxnOffsetCommitRequest:
        self._expect("send offsets", TxnState.IN_TRANSACTION)
        if group.group_id not in self.groups:
            raise TransactionStateError(f"group {group.group_id!r} was not added to the txn")
        return tm.TxnOffsetCommitRequest(
            self.transactional_id,
            group.group_id,
            self.producer_id,
            self.producer_epoch,
            [tm.TxnCommitOffset(t, p, o) for (t, p), o in sorted(offsets.items())],
            member_id=group.member_id,
            generation=group.generation,
            group_instance_id=group.group_instance_id,
        )

    def offset_commit_answer(self, response: tm.TxnOffsetCommitResponse) -> None:
        codes = [r.error_code for r in response.results if r.error_code != ErrorCode.NONE]
        if response.error_code != ErrorCode.NONE:
            codes.insert(0, response.error_code)
        if codes:
            raise self._failed(codes[0], response.error_message, "TxnOffsetCommit")

    def end_request_allowed(self, commit: bool) -> None:
        """Raise unless commit (or abort) is allowed now; changes nothing."""
        if commit:
            if self.state is TxnState.ABORTABLE_ERROR:
                raise self._abortable("commit")
            self._expect("commit", TxnState.IN_TRANSACTION, TxnState.COMMITTING)
        else:
            self._expect(
                "abort", TxnState.IN_TRANSACTION, TxnState.ABORTABLE_ERROR, TxnState.ABORTING
            )

    def end_request(self, commit: bool) -> tm.EndTxnRequest | None:
        """EndTxn, or None when nothing reached the coordinator (no partition or group
        added: the transaction ends here, as Kafka's producer does)."""
        self.end_request_allowed(commit)
        # After an abortable error (a batch whose sequence is in doubt, or a failed request)
        # the producer starts over under a new epoch once aborted (UNINITIALIZED), numbering
        # every partition from 0 again.
        self._new_epoch = self._new_epoch or self.state is TxnState.ABORTABLE_ERROR
        self.state = TxnState.COMMITTING if commit else TxnState.ABORTING
        if not self.partitions and not self.groups:
            self._ended()
            return None
        return tm.EndTxnRequest(
            self.transactional_id, self.producer_id, self.producer_epoch, commit
        )

    def end_answer(self, response: tm.EndTxnResponse) -> None:
        if response.error_code == ErrorCode.NONE:
            self._ended()
            return
        raise self._failed(response.error_code, response.error_message, "EndTxn")

    def _ended(self) -> None:
        self.partitions.clear()
        self.groups.clear()
        self.error = None
        self.state = TxnState.UNINITIALIZED if self._new_epoch else TxnState.READY
        self._new_epoch = False

    # -- failures -----------------------------------------------------------------------------

    def batch_failed(self, error: BaseException) -> None:
        """A batch of the transaction failed for good: fatal when fenced, else the
        transaction can only be aborted."""
        if isinstance(error, BrokerError) and error.code in FATAL:
            self._fatal(error)
        elif self.state is TxnState.IN_TRANSACTION and isinstance(error, RilletError):
            self.state = TxnState.ABORTABLE_ERROR
            self.error = error

    def _failed(self, code: int, message: str | None, api: str) -> BrokerError:
        """The error to raise for a non-retriable answer, after moving the state."""
        err = error_for(code, f"{api} of {self.transactional_id!r}: {message or ''}".rstrip(": "))
        if err.code in RETRIABLE:
            return err  # the driver's to retry; the state is unchanged
        if err.code in FATAL:
            err = self._fatal(err)
        elif self.state in (TxnState.IN_TRANSACTION, TxnState.COMMITTING):
            self.state = TxnState.ABORTABLE_ERROR
            self.error = err
        elif self.state is TxnState.INITIALIZING:
            self.state = TxnState.UNINITIALIZED
        return err

    def _fatal(self, error: BrokerError) -> BrokerError:
        if error.code == ErrorCode.INVALID_PRODUCER_EPOCH:
            # Kafka's producer reports an epoch that went past this one as fenced.
            error = error_for(ErrorCode.PRODUCER_FENCED, error.message)
        self.state = TxnState.FATAL_ERROR
        self.error = error
        return error
