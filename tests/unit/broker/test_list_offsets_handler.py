"""ListOffsets on a real replica: a time names its record (not the record's batch), and the
special times max timestamp (-3), earliest local (-4) and latest tiered (-5), as Kafka 4's
clients send them."""

from __future__ import annotations

from pathlib import Path

import crc32c
from broker_context import EPOCH_MS, NODE_ID, middle

from rillet.broker.handlers.list_offsets import handle_list_offsets
from rillet.broker.handlers.produce import handle_produce
from rillet.wire.api import EARLIEST_LOCAL_TIMESTAMP, LATEST_TIERED_TIMESTAMP, MAX_TIMESTAMP
from rillet.wire.batch import CRC_OFFSET, CRC_START, HEADER_SIZE, build_batch
from rillet.wire.compression import Compression
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


async def test_a_time_names_the_record_not_its_batch(tmp_path: Path) -> None:
    """librdkafka's test 0054: records stamped 1234 and 999999999999 in one batch; asking
    for 999999999999 is offset 1 on Kafka (batch granularity answered offset 0)."""
    m = middle(tmp_path)
    m.host("t", 0, isr=(NODE_ID,), replicas=(NODE_ID,))
    records = build_batch([(1234, None, b"a", None), (999999999999, None, b"b", None)])
    handle_produce(m.ctx, ProduceRequest(1, 30_000, [ProducePartitionData("t", 0, records)]))
    times = (1234, 999999999999, 1000000000000)
    answer = handle_list_offsets(
        m.ctx, ListOffsetsRequest([ListOffsetsPartition("t", 0, t) for t in times])
    )
    assert [(p.error_code, p.offset, p.timestamp_ms) for p in answer.partitions] == [
        (ErrorCode.NONE, 0, 1234),
        (ErrorCode.NONE, 1, 999999999999),
        (ErrorCode.NONE, -1, -1),
    ]


async def test_a_batch_whose_records_do_not_decode_is_a_corrupt_message(tmp_path: Path) -> None:
    """Appends check a batch's CRC, not its records: a producer may store a compressed batch
    whose payload does not decompress. Asking for its max timestamp answers CORRUPT_MESSAGE
    for that partition, not an internal error for the whole request."""
    m = middle(tmp_path)
    m.host("t", 0, isr=(NODE_ID,), replicas=(NODE_ID,))
    data = bytearray(build_batch([(EPOCH_MS, None, b"v" * 50, None)] * 3, Compression.GZIP))
    data[HEADER_SIZE:] = bytes(len(data) - HEADER_SIZE)  # not a gzip stream
    data[CRC_OFFSET : CRC_OFFSET + 4] = crc32c.crc32c(bytes(data[CRC_START:])).to_bytes(4, "big")
    produced = handle_produce(
        m.ctx, ProduceRequest(1, 30_000, [ProducePartitionData("t", 0, bytes(data))])
    )
    assert [p.error_code for p in produced.partitions] == [ErrorCode.NONE]
    answer = handle_list_offsets(
        m.ctx, ListOffsetsRequest([ListOffsetsPartition("t", 0, MAX_TIMESTAMP)])
    )
    assert [p.error_code for p in answer.partitions] == [ErrorCode.CORRUPT_MESSAGE]
    answer = handle_list_offsets(m.ctx, ListOffsetsRequest([ListOffsetsPartition("t", 0, 1)]))
    assert [p.error_code for p in answer.partitions] == [ErrorCode.CORRUPT_MESSAGE]
