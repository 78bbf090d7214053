"""OffsetForLeaderEpoch (KIP-101/320): where a leader epoch ended in the leader's log.

A consumer that saw a leader change asks the new leader where the epoch of its position
ended; a position beyond that end means the log it read from was truncated (Kafka clients'
offset validation). The answer comes from the partition's leader-epoch history, the same
one followers use to find where their log diverges.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.wire.request import Request


@dataclass(frozen=True, slots=True)
class EpochQuery:
    topic: str
    partition: int
    leader_epoch: int  # the epoch whose end is asked for
    current_leader_epoch: int = -1  # the asker's view of the leader's epoch; -1: no check


@dataclass(frozen=True, slots=True)
class OffsetForLeaderEpochRequest(Request["OffsetForLeaderEpochResponse"]):
    partitions: list[EpochQuery]


@dataclass(frozen=True, slots=True)
class EpochEndOffset:
    """(-1, -1) when the log knows no epoch at or below the one asked for."""

    topic: str
    partition: int
    error_code: int
    leader_epoch: int = -1
    end_offset: int = -1


@dataclass(frozen=True, slots=True)
class OffsetForLeaderEpochResponse:
    partitions: list[EpochEndOffset]
