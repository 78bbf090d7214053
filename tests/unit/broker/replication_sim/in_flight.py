"""What a broker process remembers about work in flight: acks=all waiters, its ISR
proposal, the follower fetch it sent, and the follower fetches it holds in a long poll.

Why a module of its own: all of it lives in the process's memory, so a crash loses it and a
restart starts empty (:meth:`BrokerProcess._reset`); the parts of the broker that create
and resolve these records share them through that one reset.
"""

from __future__ import annotations

from dataclasses import dataclass

import trio

from rillet.broker.cluster.controller_link import INITIAL_BACKOFF_S
from rillet.broker.replica.replication.leader_state import IsrProposal

from .messages import ControllerReq, FetchReq
from .partition_log import Batch


@dataclass(eq=False, slots=True)
class AcksWaiter:
    """An acks=all produce waiting for the high watermark to reach ``target`` (its batch's
    end) while leading in ``batch.epoch``; resolved once: by the replica's
    ``acks_progress``, or by its timeout."""

    target: int
    batch: Batch
    resolved: bool = False


@dataclass(slots=True)
class AlterCall:
    """One IsrManager._propose in flight (ControllerLink.call with its deadline)."""

    proposal: IsrProposal
    req: ControllerReq
    deadline: int
    backoff_s: float = INITIAL_BACKOFF_S  # the link's own backoff (next_backoff_s)
    done: bool = False


@dataclass(slots=True)
class ParkedFetch:
    """A follower fetch held in the leader's long poll until records come or ``deadline``;
    ``woken`` is registered with the real replica, which sets it when its log end moves."""

    req: FetchReq
    deadline: int
    woken: trio.Event | None = None
