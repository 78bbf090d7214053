"""The requests and answers that travel over the simulated network.

Why a module of its own: these are the wire of the simulation (follower fetches, produce,
and every call to the controller); each keeps only the fields the modelled code reads, and
being frozen they can be delivered twice or late without anyone mutating what another
copy carries.
"""

from __future__ import annotations

from dataclasses import dataclass

from .partition_log import Batch


@dataclass(frozen=True, slots=True)
class FetchReq:
    follower: int
    req_id: int
    fetch_offset: int
    current_leader_epoch: int
    last_fetched_epoch: int


@dataclass(frozen=True, slots=True)
class FetchResp:
    req_id: int
    error: int
    high_watermark: int
    log_start_offset: int
    records: tuple[Batch, ...] = ()
    log_end_offset: int = -1
    diverging_epoch: int = -1
    diverging_end_offset: int = -1
    leader_epoch: int = -1


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
