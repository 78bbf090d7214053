"""DescribeLogDirs (api 35, kafka-log-dirs --describe): the node's data directory, each
hosted replica's size and lag, the file system's bytes; through the Kafka listener
(kafka-python encodes and decodes) and on real replicas."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from broker_context import EPOCH_MS, NODE_ID, middle
from kafka.protocol.admin import DescribeLogDirsRequest, DescribeLogDirsResponse
from kafka_front_end import forwarded

from rillet.broker.handlers.log_dirs import handle_describe_log_dirs
from rillet.broker.handlers.produce import handle_produce
from rillet.broker.kafka.codec import encode_response
from rillet.wire import log_dir_messages as ldm
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import ProducePartitionData, ProduceRequest


async def test_each_hosted_replica_with_its_size_and_the_disk(tmp_path: Path) -> None:
    m = middle(tmp_path)
    m.host("a", 0, isr=(NODE_ID,), replicas=(NODE_ID,))
    m.host("a", 1, leader=2)  # a follower: nothing fetched yet
    m.host("b", 0, isr=(NODE_ID,), replicas=(NODE_ID,))
    records = build_batch([(EPOCH_MS, None, bytes(100), None)] * 3)
    handle_produce(m.ctx, ProduceRequest(1, 30_000, [ProducePartitionData("a", 0, records)]))

    every = handle_describe_log_dirs(m.ctx, ldm.DescribeLogDirsRequest())
    assert every.error_code == ErrorCode.NONE
    assert every.log_dir == str(tmp_path.resolve())
    st = os.statvfs(tmp_path)
    assert every.total_bytes == st.f_blocks * st.f_frsize
    assert 0 < every.usable_bytes <= every.total_bytes
    assert every.partitions == [
        ldm.LogDirPartition("a", 0, len(records), 0),
        ldm.LogDirPartition("a", 1, 0, 0),
        ldm.LogDirPartition("b", 0, 0, 0),
    ]
    asked = ldm.DescribeLogDirsRequest([ldm.LogDirTopic("a", [1, 7]), ldm.LogDirTopic("nope", [0])])
    only = handle_describe_log_dirs(m.ctx, asked)
    assert only.partitions == [ldm.LogDirPartition("a", 1, 0, 0)]  # what is not hosted is left out


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_kafka_log_dirs_answer_through_the_listener(version: int) -> None:
    request = DescribeLogDirsRequest(topics=None)
    schema, action = forwarded(request, version)
    assert action.native == ldm.DescribeLogDirsRequest(None)
    native = ldm.DescribeLogDirsResponse(
        ErrorCode.NONE,
        "/data/n1",
        10_000,
        4_000,
        [ldm.LogDirPartition("a", 0, 300, 0), ldm.LogDirPartition("a", 1, 0, 2)],
    )
    decoded = DescribeLogDirsResponse.decode(
        encode_response(3, schema, action.reply(native)), version=version, header=True, framed=True
    )
    [result] = decoded.results
    assert (result.error_code, result.log_dir) == (0, "/data/n1")
    if version >= 4:
        assert (result.total_bytes, result.usable_bytes) == (10_000, 4_000)
    [topic] = result.topics
    assert topic.name == "a"
    assert [
        (p.partition_index, p.partition_size, p.offset_lag, p.is_future_key)
        for p in topic.partitions
    ] == [(0, 300, 0, False), (1, 0, 2, False)]
