"""ListOffsets' special times on a real replica: max timestamp (-3), earliest local (-4) and
latest tiered (-5), as Kafka 4's clients send them."""

from __future__ import annotations

from pathlib import Path

from broker_context import EPOCH_MS, NODE_ID, middle

from rillet.broker.handlers.list_offsets import handle_list_offsets
from rillet.broker.handlers.produce import handle_produce
from rillet.wire.api import EARLIEST_LOCAL_TIMESTAMP, LATEST_TIERED_TIMESTAMP, MAX_TIMESTAMP
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ProducePartitionData,
    ProduceRequest,
)


async def test_max_timestamp_earliest_local_and_latest_tiered(tmp_path: Path) -> None:
    m = middle(tmp_path)
    m.host("t", 0, isr=(NODE_ID,), replicas=(NODE_ID,))
    for stamps in ([10, 70, 30], [50], [70, 20]):
        records = build_batch([(EPOCH_MS + s, None, b"v", None) for s in stamps])
        handle_produce(m.ctx, ProduceRequest(1, 30_000, [ProducePartitionData("t", 0, records)]))
    times = (MAX_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP, LATEST_TIERED_TIMESTAMP)
    answer = handle_list_offsets(
        m.ctx, ListOffsetsRequest([ListOffsetsPartition("t", 0, t) for t in times])
    )
    assert [(p.error_code, p.offset, p.timestamp_ms) for p in answer.partitions] == [
        (ErrorCode.NONE, 1, EPOCH_MS + 70),  # the first record with the largest time
        (ErrorCode.NONE, 0, -1),
        (ErrorCode.NONE, -1, -1),
    ]
