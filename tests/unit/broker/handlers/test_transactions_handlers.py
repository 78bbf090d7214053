"""Transaction apis (handlers/transactions.py and the transactional path of
handlers/producer_ids.py) on the running controller, through one transaction's life:
InitProducerId, AddPartitionsToTxn (and its KIP-890 verify-only check), AddOffsetsToTxn,
TxnOffsetCommit, EndTxn, the leaders' TxnMarkersWritten, and the listings; a fenced epoch
and an unknown partition are refused, and elsewhere than the controller every change is
NOT_COORDINATOR."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from broker_context import middle
from voter_context import Voter, answer, voter

from rillet.broker.handlers import transactions as txn
from rillet.broker.handlers.producer_ids import handle_init_producer_id
from rillet.wire import transaction_messages as tm
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import InitProducerIdRequest, InitProducerIdResponse

T0 = tm.TxnTopicPartition("t", 0)


async def started(v: Voter) -> tuple[int, int]:
    """A transactional producer's id and epoch, with partition t-0 in its transaction."""
    await v.live_brokers(1)
    await v.topic("t", 2)
    init = await answer(
        handle_init_producer_id(v.ctx, InitProducerIdRequest("app", 60_000))
    )  # the transactional path of InitProducerId
    assert init.error_code == ErrorCode.NONE and init.producer_id >= 0
    pid, epoch = init.producer_id, init.producer_epoch
    added = await answer(
        txn.handle_add_partitions_to_txn(
            v.ctx, tm.AddPartitionsToTxnRequest("app", pid, epoch, [T0])
        )
    )
    assert (added.error_code, [r.error_code for r in added.results]) == (
        ErrorCode.NONE,
        [ErrorCode.NONE],
    )
    return pid, epoch


async def test_a_transaction_commits_through_its_markers(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        pid, epoch = await started(v)
        again = await answer(
            txn.handle_txn_init_producer_id(v.ctx, InitProducerIdRequest("other", 60_000))
        )
        assert again.error_code == ErrorCode.NONE and again.producer_id != pid
        offsets = await answer(
            txn.handle_add_offsets_to_txn(v.ctx, tm.AddOffsetsToTxnRequest("app", pid, epoch, "g"))
        )
        assert offsets.error_code == ErrorCode.NONE
        committed = await answer(
            txn.handle_txn_offset_commit(
                v.ctx,
                tm.TxnOffsetCommitRequest("app", "g", pid, epoch, [tm.TxnCommitOffset("t", 0, 9)]),
            )
        )
        assert [(r.topic, r.error_code) for r in committed.results] == [("t", ErrorCode.NONE)]
        described = txn.handle_describe_transactions(
            v.ctx, tm.DescribeTransactionsRequest(["app", "ghost"])
        )
        app, ghost = described.transactions
        assert (app.error_code, app.state, app.producer_id, app.timeout_ms) == (
            ErrorCode.NONE,
            "Ongoing",
            pid,
            60_000,
        )
        assert app.partitions == [T0]
        assert ghost.error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
        ended = await answer(txn.handle_end_txn(v.ctx, tm.EndTxnRequest("app", pid, epoch, True)))
        assert ended.error_code == ErrorCode.NONE
        record = v.state.transactions.get("app")
        assert record is not None and record.txn_state.kafka_name == "PrepareCommit"
        cluster_id, auth = v.auth()
        wrong = tm.TxnMarkersWrittenRequest(
            cluster_id, b"\0" * 32, 1, "app", pid, record.producer_epoch, [T0]
        )
        refused = txn.handle_txn_markers_written(v.ctx, wrong)
        assert isinstance(refused, tm.TxnMarkersWrittenResponse)
        assert refused.error_code == ErrorCode.AUTHENTICATION_FAILED
        written = await answer(
            txn.handle_txn_markers_written(
                v.ctx,
                tm.TxnMarkersWrittenRequest(
                    cluster_id, auth, 1, "app", pid, record.producer_epoch, [T0]
                ),
            )
        )
        assert written.error_code == ErrorCode.NONE
        done = v.state.transactions.get("app")
        assert done is not None and done.txn_state.kafka_name == "CompleteCommit"
        group_offsets = v.state.groups.offsets["g"]
        assert [o.offset for o in group_offsets.values()] == [9]  # applied on commit
        late = await answer(
            txn.handle_txn_markers_written(
                v.ctx,
                tm.TxnMarkersWrittenRequest(
                    cluster_id, auth, 1, "app", pid, record.producer_epoch, [T0]
                ),
            )
        )
        assert late.error_code == ErrorCode.INVALID_TXN_STATE
        listed = txn.handle_list_transactions(
            v.ctx, tm.ListTransactionsRequest(["CompleteCommit", "Bogus"])
        )
        assert [(t.transactional_id, t.state) for t in listed.transactions] == [
            ("app", "CompleteCommit")
        ]
        assert listed.unknown_state_filters == ["Bogus"]
        by_pid = txn.handle_list_transactions(v.ctx, tm.ListTransactionsRequest([], [pid]))
        assert [t.transactional_id for t in by_pid.transactions] == ["app"]


async def test_unknown_partitions_fenced_epochs_and_verification(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        pid, epoch = await started(v)
        unknown = await answer(
            txn.handle_add_partitions_to_txn(
                v.ctx,
                tm.AddPartitionsToTxnRequest("app", pid, epoch, [T0, tm.TxnTopicPartition("x", 0)]),
            )
        )
        assert unknown.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert [r.error_code for r in unknown.results] == [
            ErrorCode.NONE,
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ]
        verified = txn.handle_add_partitions_to_txn(
            v.ctx,
            tm.AddPartitionsToTxnRequest(
                "app", pid, epoch, [T0, tm.TxnTopicPartition("t", 1)], verify_only=True
            ),
        )
        assert isinstance(verified, tm.AddPartitionsToTxnResponse)
        assert [r.error_code for r in verified.results] == [
            ErrorCode.NONE,
            ErrorCode.INVALID_TXN_STATE,  # not added to the transaction
        ]
        bumped = await answer(
            txn.handle_txn_init_producer_id(v.ctx, InitProducerIdRequest("app", 60_000))
        )  # a new instance of the producer: the ongoing transaction is aborted first
        assert bumped.error_code == ErrorCode.CONCURRENT_TRANSACTIONS
        fencing = v.state.transactions.get("app")
        assert fencing is not None and fencing.txn_state.kafka_name == "PrepareEpochFence"
        fenced = await answer(txn.handle_end_txn(v.ctx, tm.EndTxnRequest("app", pid, epoch, True)))
        assert fenced.error_code == ErrorCode.PRODUCER_FENCED
        fenced_offsets = await answer(
            txn.handle_add_offsets_to_txn(v.ctx, tm.AddOffsetsToTxnRequest("app", pid, epoch, "g"))
        )
        assert fenced_offsets.error_code == ErrorCode.PRODUCER_FENCED


async def test_a_node_that_is_not_the_controller_is_not_the_coordinator(tmp_path: Path) -> None:
    ctx = middle(tmp_path).ctx
    init = txn.handle_txn_init_producer_id(ctx, InitProducerIdRequest("app", 60_000))
    assert isinstance(init, InitProducerIdResponse)
    add = txn.handle_add_partitions_to_txn(ctx, tm.AddPartitionsToTxnRequest("app", 1, 0, [T0]))
    assert isinstance(add, tm.AddPartitionsToTxnResponse)
    end = txn.handle_end_txn(ctx, tm.EndTxnRequest("app", 1, 0, True))
    offsets = txn.handle_add_offsets_to_txn(ctx, tm.AddOffsetsToTxnRequest("app", 1, 0, "g"))
    commit = txn.handle_txn_offset_commit(
        ctx, tm.TxnOffsetCommitRequest("app", "g", 1, 0, [tm.TxnCommitOffset("t", 0, 1)])
    )
    assert isinstance(commit, tm.TxnOffsetCommitResponse)
    codes = [init.error_code, add.error_code, end.error_code, offsets.error_code]  # type: ignore[union-attr]
    codes += [r.error_code for r in add.results + commit.results]
    assert codes == [ErrorCode.NOT_COORDINATOR] * 6
    described = txn.handle_describe_transactions(ctx, tm.DescribeTransactionsRequest(["app"]))
    assert [d.error_code for d in described.transactions] == [ErrorCode.NOT_COORDINATOR]
    listed = txn.handle_list_transactions(ctx, tm.ListTransactionsRequest())
    assert (listed.error_code, listed.transactions) == (ErrorCode.NONE, [])
