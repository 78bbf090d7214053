"""DeleteRecords (handlers/record_deletion.py) on real leader replicas under MockClock: the
log start moves up to the high watermark at most, the answer waits until every in-sync
replica has moved its own (REQUEST_TIMED_OUT when one does not within the timeout), and
partitions named twice or not led here are refused one by one."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from broker_context import EPOCH_MS, NODE_ID, middle

from rillet.broker.handlers.produce import handle_produce
from rillet.broker.handlers.record_deletion import handle_delete_records
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import ProducePartitionData, ProduceRequest
from rillet.wire.record_deletion_messages import (
    TO_HIGH_WATERMARK,
    DeleteRecordsPartition,
    DeleteRecordsRequest,
)


def five_records(topic: str) -> ProduceRequest:
    records = build_batch([(EPOCH_MS + i, None, b"v", None) for i in range(5)])
    return ProduceRequest(1, 30_000, [ProducePartitionData(topic, 0, records)])


async def test_records_below_an_offset_are_deleted_up_to_the_high_watermark(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    alone = m.host("t", 0, isr=(NODE_ID,), replicas=(NODE_ID,))
    m.host("u", 0, isr=(NODE_ID,), replicas=(NODE_ID,))
    for topic in ("t", "u"):
        handle_produce(m.ctx, five_records(topic))
    assert alone.high_watermark == 5
    request = DeleteRecordsRequest(
        [
            DeleteRecordsPartition("t", 0, 2),
            DeleteRecordsPartition("u", 0, TO_HIGH_WATERMARK),
            DeleteRecordsPartition("ghost", 0, 1),
        ]
    )
    answer = await handle_delete_records(m.ctx, request)
    assert [(p.topic, p.error_code, p.low_watermark) for p in answer.partitions] == [
        ("t", ErrorCode.NONE, 2),
        ("u", ErrorCode.NONE, 5),
        ("ghost", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
    ]
    assert alone.log.log_start_offset == 2
    refused = await handle_delete_records(
        m.ctx,
        DeleteRecordsRequest(
            [DeleteRecordsPartition("t", 0, 6), DeleteRecordsPartition("u", 0, 5),
             DeleteRecordsPartition("u", 0, 5)]
        ),
    )  # fmt: skip
    assert [(p.topic, p.error_code) for p in refused.partitions] == [
        ("t", ErrorCode.OFFSET_OUT_OF_RANGE),  # above the high watermark
        ("u", ErrorCode.INVALID_REQUEST),
        ("u", ErrorCode.INVALID_REQUEST),
    ]
    assert alone.log.log_start_offset == 2
    await m.replicas.close_all()


async def test_an_in_sync_follower_that_does_not_confirm_times_the_answer_out(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    replica = m.host("t", 0, isr=(NODE_ID, 2), replicas=(NODE_ID, 2))
    handle_produce(m.ctx, five_records("t"))
    replica.on_follower_fetch(2, 5, m.clock.now_ms())  # it holds them; its log start unsaid
    assert replica.high_watermark == 5
    start = trio.current_time()
    answer = await handle_delete_records(
        m.ctx, DeleteRecordsRequest([DeleteRecordsPartition("t", 0, 3)], timeout_ms=2_000)
    )
    assert [p.error_code for p in answer.partitions] == [ErrorCode.REQUEST_TIMED_OUT]
    assert trio.current_time() - start == 2.0
    assert replica.log.log_start_offset == 3  # the leader's own log start has moved
    await m.replicas.close_all()
