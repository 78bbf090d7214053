"""A deferred reply trimmed to what its caller may see, as a coroutine that owns its handler's.

The dispatcher trims some answers before they are sent (a fetch session's partitions with
news, an authorizer's view). For a deferred answer it used to wrap the handler's coroutine
in another coroutine; a reply discarded before it ran (its connection closed with the reply
still queued) was closed, but closing a coroutine that never started does not close the one
it holds as an argument, and Python then warned that the handler's coroutine was never
awaited. This wrapper drives the handler's coroutine itself, so closing it closes that one.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Generator
from typing import Any


class ReshapedReply(Coroutine[Any, Any, Any]):
    """Drives ``inner`` unchanged and returns ``reshape`` of its result."""

    __slots__ = ("_inner", "_reshape")

    def __init__(self, inner: Coroutine[Any, Any, Any], reshape: Callable[[Any], Any]) -> None:
        self._inner = inner
        self._reshape = reshape

    def __await__(self) -> Generator[Any, None, Any]:
        return self

    def __iter__(self) -> ReshapedReply:
        return self

    def __next__(self) -> Any:
        return self.send(None)

    def send(self, value: Any) -> Any:
        try:
            return self._inner.send(value)
        except StopIteration as done:
            raise StopIteration(self._reshape(done.value)) from None

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        try:
            if val is None and tb is None:
                return self._inner.throw(typ)
            return self._inner.throw(typ, val, tb)
        except StopIteration as done:
            raise StopIteration(self._reshape(done.value)) from None

    def close(self) -> None:
        self._inner.close()
