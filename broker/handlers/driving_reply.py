"""Deferred replies wrapped so that closing the wrapper closes the handler's coroutine.

A deferred reply is the coroutine of a handler the connection awaits later. Some are
wrapped: trimmed to what the caller may see (a fetch session's partitions with news, an
authorizer's view), or timed for /metrics. A wrapper written as another ``async def``
holds the handler's coroutine as an argument, and closing a coroutine that never started
does not close that argument: a reply discarded before it ran (its connection closed with
it still queued) left the handler's coroutine unclosed, and Python warned that it was
never awaited. These wrappers are awaitables whose ``__await__`` delegates to the inner
coroutine (``yield from``: every value the event loop sends or throws reaches it) and whose
``close`` closes it; both are :class:`~rillet.broker.handlers.deferred.Deferred`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Generic, TypeVar

from rillet.broker.handlers.deferred import Deferred

R = TypeVar("R")
T = TypeVar("T")


class DrivingReply(Generic[R]):
    """Awaits ``inner`` and returns its answer; subclasses see how it ended
    (:meth:`_returned`, :meth:`_raised`). Closing it closes ``inner``."""

    __slots__ = ("_inner",)

    def __init__(self, inner: Deferred[R]) -> None:
        self._inner = inner

    def __await__(self) -> Generator[object, None, R]:
        try:
            value = yield from self._inner.__await__()
        except Exception:
            self._raised()
            raise
        self._returned()
        return value

    def close(self) -> None:
        self._inner.close()

    def _returned(self) -> None:
        """``inner`` returned."""

    def _raised(self) -> None:
        """``inner`` raised; the exception goes on to the awaiting task."""


class ReshapedReply(Generic[R, T]):
    """Returns ``reshape`` of the handler's answer."""

    __slots__ = ("_inner", "_reshape")

    def __init__(self, inner: Deferred[R], reshape: Callable[[R], T]) -> None:
        self._inner = inner
        self._reshape = reshape

    def __await__(self) -> Generator[object, None, T]:
        value = yield from self._inner.__await__()
        return self._reshape(value)

    def close(self) -> None:
        self._inner.close()
