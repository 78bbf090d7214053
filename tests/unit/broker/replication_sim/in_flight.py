"""What a broker process remembers about work in flight: acks=all waiters, the follower
fetch it sent, and the follower fetches it holds in a long poll (its calls to the
controller are :class:`~.controller_calls.SimCall`).

Why a module of its own: all of it lives in the process's memory, so a crash loses it and a
restart starts empty (:meth:`BrokerProcess._reset`); the parts of the broker that create
and resolve these records share them through that one reset.
"""

from __future__ import annotations

from dataclasses import dataclass

import trio

from rillet.broker.replica.replication.follower_fetch_answer import LongPoll

from .messages import FetchReq
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
class ParkedFetch:
    """A follower fetch held in the leader's long poll (the handler's own
    :class:`LongPoll`) until records come or its deadline; ``woken`` is registered with the
    real replica, which sets it when its log end moves."""

    req: FetchReq
    poll: LongPoll
    woken: trio.Event | None = None
