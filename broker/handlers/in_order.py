"""Work a handler spreads over event-loop turns that must still finish in request order.

A Produce request for thousands of partitions appends thousands of batches; done in one
stretch it holds the event loop for hundreds of milliseconds on a loaded machine (every
other connection, the Raft timers and the heartbeats wait). Yielding between slices of the
work lets them run, but appends must keep the connection's request order: idempotent
batches of one partition are pipelined over several requests. A handler wraps such work in
:class:`InOrder`; the connection awaits it before it reads its next request, so the order
holds and only that connection waits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from rillet.broker.handlers.deferred import Deferred

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class InOrder(Generic[R]):
    """``work`` returns what a handler returns otherwise: a response, or a coroutine that
    produces it (an acks=all wait), never None (work with no answer stays synchronous)."""

    work: Deferred[R | Deferred[R]]
