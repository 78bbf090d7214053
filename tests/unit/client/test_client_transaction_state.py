"""The transactional producer's state machine, without sockets: which calls are allowed
when, the requests it asks for, and how answers (and failed batches) move it."""

from __future__ import annotations

import pytest

from rillet.client.errors import (
    BrokerError,
    ConcurrentTransactionsError,
    ProducerFencedError,
    UnknownServerError,
)
from rillet.client.transaction_state import (
    GroupMetadata,
    TransactionAbortableError,
    TransactionManager,
    TransactionStateError,
    TxnState,
)
from rillet.wire import transaction_messages as tm
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import InitProducerIdResponse


def ready(producer_id: int = 7, epoch: int = 3) -> TransactionManager:
    m = TransactionManager("tx", 60_000)
    request = m.init_request()
    assert (request.transactional_id, request.transaction_timeout_ms) == ("tx", 60_000)
    m.init_answer(InitProducerIdResponse(ErrorCode.NONE, producer_id, epoch))
    assert m.state is TxnState.READY
    return m


def in_transaction() -> TransactionManager:
    m = ready()
    m.begin()
    return m


def added(m: TransactionManager, *tps: tuple[str, int]) -> None:
    request = m.add_partitions_request(list(tps))
    assert request is not None
    m.add_partitions_answer(request, tm.AddPartitionsToTxnResponse(ErrorCode.NONE))


def test_a_commit_goes_through_add_partitions_offsets_and_end_txn() -> None:
    m = in_transaction()
    request = m.add_partitions_request([("t", 1), ("t", 0), ("t", 1)])
    assert request == tm.AddPartitionsToTxnRequest(
        "tx", 7, 3, [tm.TxnTopicPartition("t", 0), tm.TxnTopicPartition("t", 1)]
    )
    m.add_partitions_answer(request, tm.AddPartitionsToTxnResponse(ErrorCode.NONE))
    assert m.add_partitions_request([("t", 0)]) is None  # added already: no request
    group = GroupMetadata("g", generation=4, member_id="m-1")
    offsets_request = m.add_offsets_request(group)
    assert offsets_request == tm.AddOffsetsToTxnRequest("tx", 7, 3, "g")
    m.add_offsets_answer(offsets_request, tm.AddOffsetsToTxnResponse(ErrorCode.NONE))
    assert m.add_offsets_request(group) is None
    commit = m.offset_commit_request({("t", 0): 5}, group)
    assert commit.offsets == [tm.TxnCommitOffset("t", 0, 5)]
    assert (commit.member_id, commit.generation) == ("m-1", 4)
    m.offset_commit_answer(tm.TxnOffsetCommitResponse(ErrorCode.NONE))
    end = m.end_request(commit=True)
    assert end == tm.EndTxnRequest("tx", 7, 3, True)
    assert m.state is TxnState.COMMITTING
    m.end_answer(tm.EndTxnResponse(ErrorCode.NONE))
    assert m.state is TxnState.READY and not m.partitions and not m.groups


def test_calls_out_of_order_are_refused_with_a_typed_error() -> None:
    m = TransactionManager("tx", 60_000)
    with pytest.raises(TransactionStateError, match="begin a transaction"):
        m.begin()
    m = ready()
    with pytest.raises(TransactionStateError, match="send"):
        m.check_can_send()
    with pytest.raises(TransactionStateError, match="commit"):
        m.end_request(commit=True)
    m.begin()
    with pytest.raises(TransactionStateError):
        m.begin()
    with pytest.raises(ValueError):
        TransactionManager("", 60_000)
    with pytest.raises(ValueError):
        TransactionManager("tx", 0)


def test_an_empty_transaction_ends_without_a_request() -> None:
    m = in_transaction()
    assert m.end_request(commit=True) is None
    assert m.state is TxnState.READY


def test_retriable_answers_leave_the_state_for_the_driver_to_retry() -> None:
    m = in_transaction()
    request = m.add_partitions_request([("t", 0)])
    assert request is not None
    answer = tm.AddPartitionsToTxnResponse(
        ErrorCode.NONE,
        [tm.TxnPartitionResult("t", 0, ErrorCode.CONCURRENT_TRANSACTIONS)],
    )
    with pytest.raises(ConcurrentTransactionsError):
        m.add_partitions_answer(request, answer)
    assert m.state is TxnState.IN_TRANSACTION and not m.partitions


def test_a_failed_batch_makes_the_transaction_abortable_and_the_abort_bumps_the_epoch() -> None:
    m = in_transaction()
    added(m, ("t", 0))
    m.batch_failed(UnknownServerError("disk full"))
    assert m.state is TxnState.ABORTABLE_ERROR
    with pytest.raises(TransactionAbortableError) as caught:
        m.check_can_send()
    assert isinstance(caught.value.__cause__, UnknownServerError)
    with pytest.raises(TransactionAbortableError):
        m.end_request(commit=True)
    abort = m.end_request(commit=False)
    assert abort == tm.EndTxnRequest("tx", 7, 3, False)
    m.end_answer(tm.EndTxnResponse(ErrorCode.NONE))
    # The failed batch's sequence is in doubt: a new epoch before the next transaction.
    assert m.state is TxnState.UNINITIALIZED
    m.init_request()
    m.init_answer(InitProducerIdResponse(ErrorCode.NONE, 7, 4))
    m.begin()
    assert m.producer_epoch == 4


def test_an_abortable_answer_refuses_commit_until_aborted() -> None:
    m = in_transaction()
    request = m.add_partitions_request([("secret", 0)])
    assert request is not None
    answer = tm.AddPartitionsToTxnResponse(
        ErrorCode.NONE, [tm.TxnPartitionResult("secret", 0, ErrorCode.AUTHORIZATION_FAILED)]
    )
    with pytest.raises(BrokerError, match="AddPartitionsToTxn"):
        m.add_partitions_answer(request, answer)
    assert m.state is TxnState.ABORTABLE_ERROR
    with pytest.raises(TransactionAbortableError):
        m.end_request_allowed(commit=True)
    assert m.end_request(commit=False) is None  # nothing was added: ended locally
    assert m.state is TxnState.UNINITIALIZED


@pytest.mark.parametrize("code", [ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_EPOCH])
def test_fencing_is_fatal_and_raised_by_every_later_call(code: ErrorCode) -> None:
    m = in_transaction()
    added(m, ("t", 0))
    end = m.end_request(commit=True)
    assert end is not None
    with pytest.raises(ProducerFencedError):
        m.end_answer(tm.EndTxnResponse(code))
    assert m.state is TxnState.FATAL_ERROR
    for call in (
        m.check_can_send,
        m.begin,
        lambda: m.end_request(commit=False),
        m.init_request,
    ):
        with pytest.raises(ProducerFencedError):
            call()


def test_a_batch_refused_as_fenced_is_fatal() -> None:
    m = in_transaction()
    m.batch_failed(ProducerFencedError("newer epoch", ErrorCode.PRODUCER_FENCED))
    assert m.state is TxnState.FATAL_ERROR
    with pytest.raises(ProducerFencedError):
        m.check_can_send()


def test_init_refused_for_authorization_is_fatal() -> None:
    m = TransactionManager("tx", 60_000)
    m.init_request()
    with pytest.raises(BrokerError, match="InitProducerId"):
        m.init_answer(InitProducerIdResponse(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
    assert m.state is TxnState.FATAL_ERROR
