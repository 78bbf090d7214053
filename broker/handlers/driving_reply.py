"""Deferred replies as coroutines that drive their handler's coroutine themselves.

A deferred reply is a coroutine the connection awaits later. Some are wrapped: trimmed to
what the caller may see (a fetch session's partitions with news, an authorizer's view), or
timed for /metrics. A wrapper written as another ``async def`` holds the handler's
coroutine as an argument, and closing a coroutine that never started does not close that
argument: a reply discarded before it ran (its connection closed with it still queued) left
the handler's coroutine unclosed, and Python warned that it was never awaited. These
wrappers step the inner coroutine themselves, so closing them closes it.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Generator
from typing import Any, NoReturn


class DrivingReply(Coroutine[Any, Any, Any]):
    """Drives ``inner`` unchanged; subclasses see how it ended (:meth:`_returned`,
    :meth:`_raised`). Closing it closes ``inner``."""

    __slots__ = ("_inner",)

    def __init__(self, inner: Coroutine[Any, Any, Any]) -> None:
        self._inner = inner

    def __await__(self) -> Generator[Any, None, Any]:
        return self

    def __iter__(self) -> DrivingReply:
        return self

    def __next__(self) -> Any:
        return self.send(None)

    def send(self, value: Any) -> Any:
        try:
            return self._inner.send(value)
        except StopIteration as done:
            self._returned(done)
        except Exception:
            self._raised()
            raise

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        try:
            if val is None and tb is None:
                return self._inner.throw(typ)
            return self._inner.throw(typ, val, tb)
        except StopIteration as done:
            self._returned(done)
        except Exception:
            self._raised()
            raise

    def close(self) -> None:
        self._inner.close()

    def _returned(self, done: StopIteration) -> NoReturn:
        """``inner`` returned ``done.value``: end this coroutine (raise a StopIteration)."""
        raise StopIteration(done.value) from None

    def _raised(self) -> None:
        """``inner`` raised; the exception goes on to the awaiting task."""


class ReshapedReply(DrivingReply):
    """Returns ``reshape`` of the handler's answer."""

    __slots__ = ("_reshape",)

    def __init__(self, inner: Coroutine[Any, Any, Any], reshape: Callable[[Any], Any]) -> None:
        super().__init__(inner)
        self._reshape = reshape

    def _returned(self, done: StopIteration) -> NoReturn:
        raise StopIteration(self._reshape(done.value)) from None
