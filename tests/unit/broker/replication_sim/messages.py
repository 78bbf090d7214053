"""The requests and answers that travel over the simulated network.

Why a module of its own: these are the wire of the simulation (follower fetches, produce,
and every call to the controller). Fetches carry the real request and answer of one
partition, the rest only the fields the scheduling code reads; being frozen, they can be
delivered twice or late without anyone mutating what another copy carries.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.wire.messages import FetchPartition, FetchPartitionResponse


@dataclass(frozen=True, slots=True)
class FetchReq:
    """A follower's fetch, one partition of the real request."""

    follower: int
    req_id: int
    partition: FetchPartition


@dataclass(frozen=True, slots=True)
class FetchResp:
    """The leader's answer, as the real code builds it (records as bytes)."""

    req_id: int
    answer: FetchPartitionResponse


@dataclass(frozen=True, slots=True)
class ProduceReq:
    payload: int
    count: int


@dataclass(frozen=True, slots=True)
class ProduceResp:
    payload: int
    error: int
    base_offset: int = -1
    count: int = 0


@dataclass(frozen=True, slots=True)
class ControllerReq:
    """Register / heartbeat / AlterPartition / metadata fetch, all to the controller."""

    kind: str
    broker: int
    req_id: int
    broker_epoch: int = -1
    caught_up: bool = False
    incarnation: str = ""
    leader_epoch: int = -1
    partition_epoch: int = -1
    isr: tuple[int, ...] = ()
    after_index: int = 0


@dataclass(frozen=True, slots=True)
class ControllerResp:
    kind: str
    req_id: int
    error: int
    broker_epoch: int = -1
    fenced: bool = True
    isr: tuple[int, ...] = ()
    partition_epoch: int = -1
    entries: tuple[tuple[int, bytes], ...] = ()
