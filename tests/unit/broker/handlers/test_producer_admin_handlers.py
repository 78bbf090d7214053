"""DescribeProducers and WriteTxnMarkers (handlers/producer_admin.py) on a real leader replica
under MockClock: a transaction left open in a partition shows as the producer's open start
offset and pins the last stable offset; an administrator's abort marker of the producer's
epoch ends it (an older epoch is refused), and partitions not led here are answered one by
one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio
import trio.testing
from broker_context import NODE_ID, Middle, middle

from rillet.broker.handlers.in_order import InOrder
from rillet.broker.handlers.produce import handle_produce
from rillet.broker.handlers.producer_admin import (
    handle_describe_producers,
    handle_write_txn_markers,
)
from rillet.metadata_quorum.txn_registry import TransactionRecord, TxnPartition, TxnState
from rillet.wire import producer_admin_messages as pam
from rillet.wire.batch import build_batch
from rillet.wire.control_batch import mark_transactional
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import ProducePartitionData, ProduceRequest, ProduceResponse
from rillet.wire.transaction_messages import TxnTopicPartition

PID = 7000
EPOCH = 3


async def _open_transaction(m: Middle) -> None:
    """Producer PID writes two records of a transaction into t-0 and never ends it."""
    m.ctx.metadata.state.transactions.apply(
        TransactionRecord(
            "app", PID, EPOCH, 1, 60_000, TxnState.ONGOING, [TxnPartition("t", 0)], started_ms=0
        )
    )
    batch = mark_transactional(
        build_batch(
            [(m.clock.now_ms(), None, b"a", None), (m.clock.now_ms(), None, b"b", None)],
            producer_id=PID,
            producer_epoch=EPOCH,
            base_sequence=0,
        )
    )
    result: Any = handle_produce(
        m.ctx, ProduceRequest(-1, 1000, [ProducePartitionData("t", 0, batch)], "app")
    )
    if isinstance(result, InOrder):
        result = await result.work
    if not isinstance(result, ProduceResponse):
        result = await result
    assert result.partitions[0].error_code == ErrorCode.NONE


def _describe(m: Middle) -> list[pam.PartitionProducers]:
    parts = [TxnTopicPartition("t", 0), TxnTopicPartition("ghost", 0)]
    return handle_describe_producers(m.ctx, pam.DescribeProducersRequest(parts)).partitions


def _abort(epoch: int) -> pam.WriteTxnMarkersRequest:
    spec = pam.TxnMarkerSpec(
        PID, epoch, False, 0, [TxnTopicPartition("t", 0), TxnTopicPartition("ghost", 0)]
    )
    return pam.WriteTxnMarkersRequest([spec])


async def test_a_hanging_transaction_is_described_and_aborted_by_its_epoch(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    replica = m.host("t", 0, isr=(NODE_ID,), replicas=(NODE_ID,))
    await _open_transaction(m)
    assert replica.high_watermark == 2
    assert replica.log.last_stable_offset(replica.high_watermark) == 0  # pinned by it

    described, ghost = _describe(m)
    assert ghost.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    (producer,) = described.producers
    assert (producer.producer_id, producer.producer_epoch) == (PID, EPOCH)
    assert (producer.last_sequence, producer.current_txn_start_offset) == (1, 0)
    assert producer.last_timestamp_ms == m.clock.now_ms()

    stale = await handle_write_txn_markers(m.ctx, _abort(EPOCH - 1))
    (result,) = stale.markers
    assert [r.error_code for r in result.results] == [
        ErrorCode.INVALID_PRODUCER_EPOCH,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ]
    assert replica.log.last_stable_offset(replica.high_watermark) == 0

    ended = await handle_write_txn_markers(m.ctx, _abort(EPOCH))
    assert ended.markers[0].results[0].error_code == ErrorCode.NONE
    assert replica.high_watermark == 3  # the marker, committed before the answer
    assert replica.log.last_stable_offset(replica.high_watermark) == 3
    (after, _) = _describe(m)
    assert after.producers[0].current_txn_start_offset == -1
    await m.replicas.close_all()
