"""The async-context lifecycle shared by Producer, Consumer and Admin.

Each client owns a nursery (for connection readers and its own background tasks) and a
ClusterClient. Entering opens both; leaving cancels the background work and closes every
connection, whatever happened inside the block.
"""

from __future__ import annotations

import contextlib
from types import TracebackType
from typing import Self

import trio

from rillet.client.cluster import ClusterClient


class ClientLifecycle:
    _cluster: ClusterClient

    def __init__(self, cluster: ClusterClient) -> None:
        self._cluster = cluster
        self._nursery: trio.Nursery | None = None
        self._exit_stack: contextlib.AsyncExitStack | None = None
        self._lifecycle_closed = False

    def _started(self, nursery: trio.Nursery) -> None:
        """Hook: start background tasks once the nursery is open."""

    async def _closing(self, exc_type: type[BaseException] | None) -> None:
        """Hook: last work before background tasks are cancelled (e.g. flush)."""

    async def __aenter__(self) -> Self:
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            self._nursery = await stack.enter_async_context(trio.open_nursery())
            self._cluster.start(self._nursery)
            stack.push_async_callback(self._cluster.close)
            self._started(self._nursery)
        except BaseException:
            await stack.aclose()
            raise
        self._exit_stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._lifecycle_closed:
            return  # close() already ran
        self._lifecycle_closed = True
        assert self._nursery is not None and self._exit_stack is not None
        try:
            await self._closing(exc_type)
        finally:
            self._nursery.cancel_scope.cancel()
            await self._exit_stack.__aexit__(exc_type, exc, tb)

    async def close(self) -> None:
        """Close now (a producer flushes first); the end of the ``async with`` is then a no-op.

        Call it at the nesting level of the ``async with`` block, not from inside a nursery or
        cancel scope opened within that block.
        """
        await self.__aexit__(None, None, None)
