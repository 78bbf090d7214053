"""DescribeLogDirs: what each partition replica of a node occupies in its data directory
(Kafka's api 35, ``kafka-log-dirs --describe``), and AlterReplicaLogDirs (api 34, moving a
replica to another directory of its node: ``kafka-reassign-partitions`` with log dirs).

A node has one log directory, its data directory: every replica it hosts is there, so the
only move there is to make is to where the replica already is.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.wire.request import Request


@dataclass(frozen=True, slots=True)
class LogDirTopic:
    topic: str
    partitions: list[int]


@dataclass(frozen=True, slots=True)
class DescribeLogDirsRequest(Request["DescribeLogDirsResponse"]):
    """``topics``: the partitions to describe; None describes every hosted replica."""

    topics: list[LogDirTopic] | None = None


@dataclass(frozen=True, slots=True)
class LogDirPartition:
    """``offset_lag``: how far the log end is behind the high watermark (0 but for a
    follower that has not yet caught up to what it was told is committed)."""

    topic: str
    partition: int
    size_bytes: int
    offset_lag: int


@dataclass(frozen=True, slots=True)
class DescribeLogDirsResponse:
    """``total_bytes`` and ``usable_bytes``: of the file system holding ``log_dir``."""

    error_code: int
    log_dir: str
    total_bytes: int
    usable_bytes: int
    partitions: list[LogDirPartition]


@dataclass(frozen=True, slots=True)
class LogDirMove:
    """Move these partitions' replicas on the receiving node into log directory ``path``."""

    path: str
    topics: list[LogDirTopic]


@dataclass(frozen=True, slots=True)
class AlterReplicaLogDirsRequest(Request["AlterReplicaLogDirsResponse"]):
    moves: list[LogDirMove]


@dataclass(frozen=True, slots=True)
class LogDirMoveResult:
    topic: str
    partition: int
    error_code: int


@dataclass(frozen=True, slots=True)
class AlterReplicaLogDirsResponse:
    results: list[LogDirMoveResult]
