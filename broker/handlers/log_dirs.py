"""DescribeLogDirs: the node's one log directory (its data directory), the bytes each hosted
replica occupies there, and the file system's total and free bytes.

Sizes come from what each log already keeps in memory (the sum of its segments), so a
request costs no file access but one ``statvfs``; a request naming partitions this node does
not host lists only those it does, as Kafka does.

AlterReplicaLogDirs moves replicas between the directories of one node. With one directory
there is nothing to move: a replica the node hosts, asked into that directory, is already
there (NONE, as Kafka answers a move to a replica's own directory); another path is not a
log directory of the node (LOG_DIR_NOT_FOUND), and a partition the node does not host gets
REPLICA_NOT_AVAILABLE, as from Kafka.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.wire.error_codes import ErrorCode
from rillet.wire.log_dir_messages import (
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirsResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    LogDirMoveResult,
    LogDirPartition,
)


class DiskSpace(NamedTuple):
    total_bytes: int
    usable_bytes: int


def disk_space(path: str) -> DiskSpace:
    """The file system's size and the bytes an unprivileged writer may still use."""
    st = os.statvfs(path)
    return DiskSpace(st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize)


def describe_replicas(
    replicas: Iterable[PartitionReplica], wanted: set[tuple[str, int]] | None
) -> list[LogDirPartition]:
    """Each replica asked for (every one when ``wanted`` is None), by topic and partition:
    its size, and how far its log end is behind its high watermark (never negative)."""
    out = []
    for r in replicas:
        key = (r.key.topic, r.key.partition)
        if r.deleted or (wanted is not None and key not in wanted):
            continue
        lag = max(0, r.high_watermark - r.log.log_end_offset)
        out.append(LogDirPartition(key[0], key[1], r.log.size_bytes, lag))
    return sorted(out, key=lambda p: (p.topic, p.partition))


def handle_describe_log_dirs(
    ctx: BrokerContext, req: DescribeLogDirsRequest
) -> DescribeLogDirsResponse:
    wanted = (
        None if req.topics is None else {(t.topic, p) for t in req.topics for p in t.partitions}
    )
    log_dir = str(ctx.replicas.data_dir.resolve())
    try:
        space = disk_space(log_dir)
    except OSError:
        return DescribeLogDirsResponse(ErrorCode.STORAGE_ERROR, log_dir, -1, -1, [])
    partitions = describe_replicas(ctx.replicas.replicas(), wanted)
    return DescribeLogDirsResponse(ErrorCode.NONE, log_dir, *space, partitions)


def move_results(
    req: AlterReplicaLogDirsRequest, log_dir: Path, hosted: set[tuple[str, int]]
) -> list[LogDirMoveResult]:
    """Each partition's answer to a move into the node's one directory ``log_dir``."""
    out = []
    for move in req.moves:
        ours = Path(move.path).resolve() == log_dir
        for t in move.topics:
            for p in t.partitions:
                if not ours:
                    code = ErrorCode.LOG_DIR_NOT_FOUND
                elif (t.topic, p) not in hosted:
                    code = ErrorCode.REPLICA_NOT_AVAILABLE
                else:
                    code = ErrorCode.NONE
                out.append(LogDirMoveResult(t.topic, p, code))
    return out


def handle_alter_replica_log_dirs(
    ctx: BrokerContext, req: AlterReplicaLogDirsRequest
) -> AlterReplicaLogDirsResponse:
    hosted = {(r.key.topic, r.key.partition) for r in ctx.replicas.replicas() if not r.deleted}
    return AlterReplicaLogDirsResponse(move_results(req, ctx.replicas.data_dir.resolve(), hosted))
