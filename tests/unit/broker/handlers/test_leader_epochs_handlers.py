"""OffsetForLeaderEpoch (handlers/leader_epochs.py) on a real leader replica: where an epoch
ended (as Kafka answers, also for epochs before the first and after the latest), and a
stale or future current epoch refused as Kafka refuses it, so the client refreshes its
metadata first."""

from __future__ import annotations

from pathlib import Path

from broker_context import EPOCH_MS, NODE_ID, middle

from rillet.broker.handlers.leader_epochs import handle_offset_for_leader_epoch
from rillet.broker.handlers.produce import handle_produce
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode
from rillet.wire.leader_epoch_messages import EpochQuery, OffsetForLeaderEpochRequest
from rillet.wire.messages import ProducePartitionData, ProduceRequest


async def test_where_an_epoch_ended_and_stale_or_future_epochs_refused(tmp_path: Path) -> None:
    m = middle(tmp_path)
    m.host("t", 0, isr=(NODE_ID,), replicas=(NODE_ID,), leader_epoch=3)
    m.host("f", 0, leader=2)  # followed here, led elsewhere
    records = build_batch([(EPOCH_MS, None, b"v", None)] * 3)
    handle_produce(m.ctx, ProduceRequest(1, 30_000, [ProducePartitionData("t", 0, records)]))
    queries = [
        EpochQuery("t", 0, 3, current_leader_epoch=3),
        EpochQuery("t", 0, 1),  # before the log's first epoch: it ends where that begins
        EpochQuery("t", 0, 4),  # after the latest: unknown
        EpochQuery("t", 0, 3, current_leader_epoch=2),
        EpochQuery("t", 0, 3, current_leader_epoch=4),
        EpochQuery("ghost", 0, 1),
        EpochQuery("f", 0, 1),
    ]
    answer = handle_offset_for_leader_epoch(m.ctx, OffsetForLeaderEpochRequest(queries))
    assert [(e.topic, e.error_code, e.leader_epoch, e.end_offset) for e in answer.partitions] == [
        ("t", ErrorCode.NONE, 3, 3),
        ("t", ErrorCode.NONE, 1, 0),  # as Kafka's LeaderEpochFileCache answers
        ("t", ErrorCode.NONE, -1, -1),
        ("t", ErrorCode.FENCED_LEADER_EPOCH, -1, -1),
        ("t", ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1),
        ("ghost", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1),
        ("f", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1),  # not in this node's metadata
    ]
    await m.replicas.close_all()
