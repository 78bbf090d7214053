"""An answer a handler has started but not finished: what the connection awaits later.

A handler does in order what must be done in order (a produce's appends) and returns the
wait for the rest (an acks=all produce's wait for the high watermark, a controller's
decision) as the coroutine of an ``async def``; the connection reads its next request
meanwhile, awaits the answers in request order, and closes those it will never send (its
peer went away), so the coroutine never runs. :class:`Deferred` names exactly that: an
awaitable of the response that can be closed, and nothing of the event loop's traffic
through it (its yields go to trio unseen).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Protocol, TypeVar

R_co = TypeVar("R_co", covariant=True)


class Deferred(Protocol[R_co]):
    """A coroutine that ends with a ``R_co`` (a handler's ``async def``)."""

    def __await__(self) -> Generator[object, None, R_co]: ...

    def close(self) -> None: ...
