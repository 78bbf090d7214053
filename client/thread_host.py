"""A trio client hosted in a private thread, for blocking code (scripts, notebooks, Spark).

The async client lives inside the host's thread for its whole life, so its nursery is entered
and left by the same task; every call crosses over with ``trio.from_thread``. The blocking
facades (blocking.py) and the Spark reader are built on it; it is public so other blocking
integrations need not write their own trio-in-a-thread.

Misuse fails loudly: a host cannot be created or called from inside a trio run (it would
block the event loop its own calls need), nor used after ``close()``.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, TypeVar

import trio

from rillet.client.errors import ClientClosedError, ClientTimeoutError, RilletError

T = TypeVar("T")
C = TypeVar("C", bound=AbstractAsyncContextManager[Any])
START_TIMEOUT_S = 60.0


def refuse_inside_trio(what: str) -> None:
    try:
        trio.lowlevel.current_trio_token()
    except RuntimeError:
        return
    raise RilletError(f"{what}: blocking clients cannot be used inside trio; use the async clients")


class ThreadHost(Generic[C]):
    """Runs ``async with factory() as client`` in a private trio thread until closed."""

    def __init__(self, factory: Callable[[], C], name: str) -> None:
        refuse_inside_trio(name)
        self._factory = factory
        self._name = name
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self._client: C | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            raise ClientTimeoutError(f"{name} did not start within {START_TIMEOUT_S}s")
        self._raise_error()

    def _raise_error(self) -> None:
        """Raise (once) what the client's thread failed with."""
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _main(self) -> None:
        try:
            trio.run(self._serve)
        except BaseException as exc:
            self._error = exc
        finally:
            self._token = None
            self._ready.set()

    async def _serve(self) -> None:
        self._stop = trio.Event()
        async with self._factory() as client:
            self._client = client
            self._token = trio.lowlevel.current_trio_token()
            self._ready.set()
            await self._stop.wait()

    @property
    def client(self) -> C:
        if self._client is None or self._token is None:
            raise ClientClosedError(f"{self._name} is closed")
        return self._client

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``await fn(*args)`` in the client's thread and return its result."""
        refuse_inside_trio(self._name)
        token = self._token
        if token is None:
            raise ClientClosedError(f"{self._name} is closed") from self._error
        try:
            return trio.from_thread.run(fn, *args, trio_token=token)
        except trio.RunFinishedError:
            raise ClientClosedError(f"{self._name} stopped") from self._error

    def call_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` in the client's thread and return its result."""
        refuse_inside_trio(self._name)
        token = self._token
        if token is None:
            raise ClientClosedError(f"{self._name} is closed") from self._error
        try:
            return trio.from_thread.run_sync(fn, *args, trio_token=token)
        except trio.RunFinishedError:
            raise ClientClosedError(f"{self._name} stopped") from self._error

    def close(self) -> None:
        """Close the client and join its thread; raises what the closing raised (if any)."""
        token, stop = self._token, self._stop
        if token is not None and stop is not None:
            refuse_inside_trio(self._name)
            try:
                trio.from_thread.run_sync(stop.set, trio_token=token)
            except trio.RunFinishedError:
                pass
        self._thread.join()
        self._raise_error()
