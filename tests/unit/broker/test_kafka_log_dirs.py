"""DescribeLogDirs (api 35, kafka-log-dirs --describe): the node's data directory, each
hosted replica's size and lag, the file system's bytes; AlterReplicaLogDirs (api 34): a move
into the node's one directory; through the Kafka listener (kafka-python encodes and decodes)
and on real replicas."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from broker_context import EPOCH_MS, NODE_ID, middle
from kafka.protocol.admin import (
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirsResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
)
from kafka_front_end import forwarded

from rillet.broker.handlers.log_dirs import (
    handle_alter_replica_log_dirs,
    handle_describe_log_dirs,
)
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


async def test_a_move_into_the_nodes_own_directory_is_done_and_elsewhere_refused(
    tmp_path: Path,
) -> None:
    """kafka-python's test_alter_replica_log_dirs moves a replica into the directory
    DescribeLogDirs named: a no-op answered NONE, as by Kafka (was UNSUPPORTED_VERSION)."""
    m = middle(tmp_path)
    m.host("a", 0, isr=(NODE_ID,), replicas=(NODE_ID,))
    here = ldm.LogDirMove(str(tmp_path), [ldm.LogDirTopic("a", [0, 5])])
    other = ldm.LogDirMove(str(tmp_path / "elsewhere"), [ldm.LogDirTopic("a", [0])])
    resp = handle_alter_replica_log_dirs(m.ctx, ldm.AlterReplicaLogDirsRequest([here, other]))
    assert resp.results == [
        ldm.LogDirMoveResult("a", 0, ErrorCode.NONE),
        ldm.LogDirMoveResult("a", 5, ErrorCode.REPLICA_NOT_AVAILABLE),  # not hosted here
        ldm.LogDirMoveResult("a", 0, ErrorCode.LOG_DIR_NOT_FOUND),
    ]


@pytest.mark.parametrize("version", [1, 2])
def test_kafka_replica_log_dir_moves_through_the_listener(version: int) -> None:
    move = AlterReplicaLogDirsRequest.AlterReplicaLogDir
    topic = move.AlterReplicaLogDirTopic(name="a", partitions=[0, 1])
    request = AlterReplicaLogDirsRequest(dirs=[move(path="/data/n1", topics=[topic])])
    schema, action = forwarded(request, version)
    assert action.native == ldm.AlterReplicaLogDirsRequest(
        [ldm.LogDirMove("/data/n1", [ldm.LogDirTopic("a", [0, 1])])]
    )
    native = ldm.AlterReplicaLogDirsResponse(
        [ldm.LogDirMoveResult("a", 0, 0), ldm.LogDirMoveResult("a", 1, 9)]
    )
    for answer, codes in ((action.reply(native), [0, 9]), (action.fail(31), [31, 31])):
        decoded = AlterReplicaLogDirsResponse.decode(
            encode_response(3, schema, answer), version=version, header=True, framed=True
        )
        [topic_result] = decoded.results
        assert topic_result.topic_name == "a"
        assert [(p.partition_index, p.error_code) for p in topic_result.partitions] == list(
            zip([0, 1], codes, strict=True)
        )
