"""KIP-890 part 1 on the produce path: a transaction's first batch in a partition is appended
only once the metadata shows the partition added to the producer's ongoing transaction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio
import trio.testing
from broker_context import NODE_ID, Middle, middle

from rillet.broker.handlers.in_order import InOrder
from rillet.broker.handlers.produce import handle_produce
from rillet.broker.handlers.txn_produce_check import VERIFY_WAIT_S
from rillet.metadata_quorum.txn_registry import TransactionRecord, TxnPartition, TxnState
from rillet.wire.batch import build_batch
from rillet.wire.control_batch import mark_transactional
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import ProducePartitionData, ProduceRequest, ProduceResponse

PID = 4000


def _request(m: Middle, sequence: int, txn_id: str = "app") -> ProduceRequest:
    batch = mark_transactional(
        build_batch(
            [(m.clock.now_ms(), None, b"v", None)],
            producer_id=PID,
            producer_epoch=2,
            base_sequence=sequence,
        )
    )
    return ProduceRequest(1, 1000, [ProducePartitionData("t", 0, batch)], txn_id)


async def _produce(m: Middle, request: ProduceRequest) -> ProduceResponse:
    result: Any = handle_produce(m.ctx, request)
    if isinstance(result, InOrder):  # a transaction's first batch: verified in order
        result = await result.work
    if not isinstance(result, ProduceResponse):
        result = await result
    assert isinstance(result, ProduceResponse)
    return result


async def test_a_partition_is_written_by_a_transaction_only_once_added_to_it(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    m.host("t", 0, isr=(NODE_ID,), replicas=(NODE_ID,))
    started = trio.current_time()
    (answer,) = (await _produce(m, _request(m, 0))).partitions
    assert answer.error_code == ErrorCode.INVALID_TXN_STATE
    assert trio.current_time() - started >= VERIFY_WAIT_S  # it waited for the metadata
    assert m.replicas.get("t", 0).log.log_end_offset == 0  # type: ignore[union-attr]
    # Once the coordinator added it, the batch goes in; later ones need no check.
    registry = m.ctx.metadata.state.transactions
    registry.apply(
        TransactionRecord(
            "app", PID, 2, 1, 60_000, TxnState.ONGOING, [TxnPartition("t", 0)], started_ms=0
        )
    )
    (first,) = (await _produce(m, _request(m, 0))).partitions
    assert (first.error_code, first.base_offset) == (ErrorCode.NONE, 0)
    (other_id,) = (await _produce(m, _request(m, 1, txn_id="someone-else"))).partitions
    assert other_id.error_code == ErrorCode.NONE  # the transaction is open here already
    registry.apply(TransactionRecord("app", PID, 2, 1, 60_000, TxnState.PREPARE_COMMIT))
    (late,) = (await _produce(m, _request(m, 2))).partitions
    assert late.error_code == ErrorCode.NONE  # still open until the marker: no check
