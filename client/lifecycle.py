"""The async-context lifecycle shared by Producer, Consumer and Admin.

Each client owns a ClusterClient, whose nursery also hosts the client's own background work.
Entering the ``async with`` opens it; leaving runs the client's last work (a producer
flushes), then cancels the background tasks and closes every connection, whatever happened
inside the block. The caller's own exception leaves the block as itself, not wrapped in an
ExceptionGroup (see ``ClusterClient.__aexit__``).
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

import trio

from rillet.client.cluster import ClusterClient
from rillet.client.errors import ClientClosedError


class ClientLifecycle:
    """Base of the async clients: ``async with`` (or ``await close()``) manages them."""

    def __init__(self, cluster: ClusterClient) -> None:
        self._cluster = cluster
        self._nursery: trio.Nursery | None = None
        self._lifecycle_state = "new"  # new -> open -> closed

    def _started(self, nursery: trio.Nursery) -> None:
        """Hook: start background tasks once the nursery is open."""

    async def _closing(self, exc_type: type[BaseException] | None) -> None:
        """Hook: last work before background tasks are cancelled (a producer flushes)."""

    def _check_open(self) -> None:
        if self._lifecycle_state != "open":
            raise ClientClosedError(
                "client is closed" if self._lifecycle_state == "closed" else "use `async with`"
            )

    async def __aenter__(self) -> Self:
        if self._lifecycle_state != "new":
            raise ClientClosedError("a client can be entered only once")
        await self._cluster.__aenter__()
        self._nursery = self._cluster.nursery
        self._lifecycle_state = "open"
        self._started(self._nursery)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        if self._lifecycle_state == "open":
            try:
                await self._closing(exc_type)
            except BaseException as closing_error:
                if exc is None:  # otherwise the caller's own exception is the one to report
                    exc_type, exc = type(closing_error), closing_error
                    tb = closing_error.__traceback__
            finally:
                self._lifecycle_state = "closed"
        return await self._cluster.__aexit__(exc_type, exc, tb)

    async def close(self) -> None:
        """Close now (a producer flushes first); the end of the ``async with`` then only
        leaves the nursery. Safe from any task or nested scope."""
        if self._lifecycle_state != "open":
            return
        try:
            await self._closing(None)
        finally:
            self._lifecycle_state = "closed"
            await self._cluster.stop()
