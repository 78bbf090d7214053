"""Partition reassignment and leader election (Kafka's apis 45, 46 and 43).

AlterPartitionReassignments and ElectLeaders change the metadata log, so a node that is not
the controller forwards them (``forwarded``: it was, so it is not forwarded again).
ListPartitionReassignments is answered from the node's own metadata view.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.wire.forwarding import ForwardedFor
from rillet.wire.request import Request


@dataclass(frozen=True, slots=True)
class PartitionMove:
    """``replicas``: the target list (preferred leader first); None cancels the move."""

    topic: str
    partition: int
    replicas: list[int] | None


@dataclass(frozen=True, slots=True)
class PartitionOutcome:
    topic: str
    partition: int
    error_code: int
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class AlterReassignmentsRequest(Request["AlterReassignmentsResponse"]):
    moves: list[PartitionMove]
    forwarded: bool = False
    forwarded_for: ForwardedFor | None = None  # set by the node that forwards it


@dataclass(frozen=True, slots=True)
class AlterReassignmentsResponse:
    """``error_code``: for the whole request (NOT_CONTROLLER...); else one per partition."""

    error_code: int
    error_message: str | None
    results: list[PartitionOutcome]


@dataclass(frozen=True, slots=True)
class TopicPartitions:
    topic: str
    partitions: list[int]


@dataclass(frozen=True, slots=True)
class ListReassignmentsRequest(Request["ListReassignmentsResponse"]):
    """``topics``: the partitions to report on; None: every partition being moved."""

    topics: list[TopicPartitions] | None = None


@dataclass(frozen=True, slots=True)
class ReassignmentStatus:
    """One partition's move in progress (``replicas`` holds the adding and removing ones)."""

    topic: str
    partition: int
    replicas: list[int]
    adding_replicas: list[int]
    removing_replicas: list[int]


@dataclass(frozen=True, slots=True)
class ListReassignmentsResponse:
    error_code: int
    reassignments: list[ReassignmentStatus]


@dataclass(frozen=True, slots=True)
class ElectLeadersRequest(Request["ElectLeadersResponse"]):
    """``election_type``: 0 preferred, 1 unclean. ``topics`` None: every partition."""

    election_type: int
    topics: list[TopicPartitions] | None = None
    forwarded: bool = False
    forwarded_for: ForwardedFor | None = None


@dataclass(frozen=True, slots=True)
class ElectLeadersResponse:
    error_code: int
    error_message: str | None
    results: list[PartitionOutcome]
