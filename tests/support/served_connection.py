"""A listener connection object (native or Kafka) served in the test's own trio loop over
loopback TCP, for tests that drive a connection without a node process; and a loop-lag
probe beside it, measuring how long the connection held the loop."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Protocol

import trio


class Served(Protocol):
    async def serve(self) -> None: ...


@asynccontextmanager
async def serving(
    make: Callable[[trio.SocketStream], Served],
) -> AsyncIterator[Callable[[], Awaitable[trio.SocketStream]]]:
    """``connect()`` opens a client stream to a fresh connection made by ``make`` and
    served in the background; every connection and stream is closed on the way out."""
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listener.socket.getsockname()[1]
    clients: list[trio.SocketStream] = []
    async with trio.open_nursery() as nursery:

        async def connect() -> trio.SocketStream:
            client = await trio.open_tcp_stream("127.0.0.1", port)
            clients.append(client)
            nursery.start_soon(make(await listener.accept()).serve)
            return client

        try:
            yield connect
        finally:
            for client in clients:
                await trio.aclose_forcefully(client)
            await listener.aclose()
            nursery.cancel_scope.cancel()


def blocking_twin(stream: trio.SocketStream) -> socket.socket:
    """A blocking socket on the same connection as ``stream`` (for a sender in a worker
    thread, so the bytes it pushes cost the test's loop nothing); the caller closes it.
    It waits with a timeout, never in blocking mode: that flag is shared with ``stream``."""
    twin = socket.socket(fileno=os.dup(stream.socket.fileno()))
    twin.settimeout(1.0)
    return twin


class LoopLagProbe:
    """The worst lateness of a task that sleeps ``interval_s`` over and over."""

    def __init__(self, interval_s: float = 0.005) -> None:
        self.interval_s = interval_s
        self.worst_s = 0.0

    async def run(self) -> None:
        while True:
            started = trio.current_time()
            await trio.sleep(self.interval_s)
            late = trio.current_time() - started - self.interval_s
            self.worst_s = max(self.worst_s, late)
