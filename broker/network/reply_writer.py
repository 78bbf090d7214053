"""A connection's replies, in request order: written at once when nothing is ahead of them,
else by the connection's writer task.

A connection's reader dispatches each request and hands its reply here; the writer task
waits for each reply in turn (a deferred reply completes later: a long-poll fetch, an
acks=all produce) and sends replies that are ready back to back in one send. The bounded
channel between the two is the limit on requests in flight per connection.

Most replies are ready when the handler returns (metadata, status, acks=1 produce,
heartbeats, offset commits). Handing such a reply to the writer task costs an event-loop
pass before it reaches the socket, and under load one pass is one turn of every busy task
on the node. So a reply that is ready while the writer task is idle (nothing queued,
nothing being sent) is encoded and written by the reader itself with one non-blocking
write; whatever the socket does not take at once goes to the writer task first, so
replies never interleave or overtake each other. The reader still yields after each reply
(the reply is on the wire by then), as it did when every reply went through the channel.
Over TLS every reply goes through the writer task (its bytes must be encrypted by the
stream).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import trio

from rillet.broker.network.part_sender import (
    buffered_len,
    close_regions,
    join_small_parts,
    send_parts,
)
from rillet.broker.network.request_budget import BudgetedReader
from rillet.broker.network.served_stream import ServedStream
from rillet.broker.security.session import Session
from rillet.wire.frame import BlobPart

log = logging.getLogger(__name__)

R = TypeVar("R")

COALESCE_BYTES = 64 * 1024  # replies ready back to back are joined up to this much
DIRECT_WRITE_MAX_BYTES = 64 * 1024  # larger replies always go through the writer task


@dataclass(slots=True)
class _Unsent:
    """A reply's parts the reader could not write at once (too large to write directly, or
    what the socket did not take); they go out before any later reply."""

    parts: list[BlobPart]


class ReplyWriter(Generic[R]):
    """``materialize``: a reply's frame parts, waiting for a deferred one; ``ready``: its
    parts now if it needs no waiting, else None; ``on_parts``: called with each reply's
    parts before they are sent (quota accounting)."""

    def __init__(
        self,
        stream: ServedStream,
        max_in_flight: int,
        materialize: Callable[[R], Awaitable[list[BlobPart]]],
        ready: Callable[[R], list[BlobPart] | None],
        on_parts: Callable[[R, list[BlobPart]], None],
        discard: Callable[[R], None],
    ) -> None:
        self.stream = stream
        self._socket_fd = stream.socket.fileno() if isinstance(stream, trio.SocketStream) else -1
        self._materialize = materialize
        self._ready = ready
        self._on_parts = on_parts
        self._discard = discard
        self._send, self._receive = trio.open_memory_channel[R | _Unsent](max_in_flight)
        self._idle = False  # the writer task waits for a reply with nothing queued or unsent
        self.direct_writes = 0

    async def put(self, reply: R) -> None:
        """Send ``reply`` after every earlier one; waits while the channel is full."""
        if self._idle and self._socket_fd >= 0:
            parts = self._ready(reply)
            if parts is not None:
                self._on_parts(reply, parts)
                unsent = self._write_now(parts)
                if unsent is None:
                    self.direct_writes += 1
                    # Still a schedule point, as a send on the channel is: a client that
                    # pipelines many small requests does not hold the loop for all of them.
                    await trio.lowlevel.checkpoint()
                    return
                self._idle = False
                try:  # the idle writer task is parked on an empty channel: never waits
                    self._send.send_nowait(_Unsent(unsent))
                except BaseException:
                    close_regions(unsent)
                    raise
                await trio.lowlevel.checkpoint()
                return
        self._idle = False
        await self._send.send(reply)

    def finish(self) -> None:
        """No more replies: the writer task ends once it has sent what it holds."""
        self._send.close()

    def _write_now(self, parts: list[BlobPart]) -> list[BlobPart] | None:
        """One non-blocking write of a small reply; what it left unsent, else None."""
        data = join_small_parts(parts, DIRECT_WRITE_MAX_BYTES)
        if data is None:
            return parts  # large: the writer task sends it (file regions with sendfile)
        try:
            sent = os.write(self._socket_fd, data)
        except OSError:  # full (BlockingIOError) or broken: the writer task finds out
            sent = 0
        return [memoryview(data)[sent:]] if sent < len(data) else None

    async def run(self) -> None:
        """The writer task: until :meth:`finish`, or a send fails (raises)."""
        out: list[BlobPart] = []
        buffered = 0
        receive = self._receive
        try:
            while True:
                try:
                    item = receive.receive_nowait()
                except trio.WouldBlock:
                    await send_parts(self.stream, out)
                    out, buffered = [], 0
                    try:
                        item = await self._wait_idle()
                    except trio.EndOfChannel:
                        return
                except trio.EndOfChannel:
                    await send_parts(self.stream, out)
                    return
                if isinstance(item, _Unsent):
                    parts = item.parts
                else:
                    parts = await self._materialize(item)
                    self._on_parts(item, parts)
                out.extend(parts)
                buffered += sum(buffered_len(p) for p in parts)
                if buffered >= COALESCE_BYTES:
                    await send_parts(self.stream, out)
                    out, buffered = [], 0
        finally:
            self._idle = False
            close_regions(out)

    async def _wait_idle(self) -> R | _Unsent:
        """The next reply, marked idle only while nothing is queued: a reply put during the
        send just made is taken without marking idle, else the reader could write a later
        ready reply directly while this one is still being waited for (out of order)."""
        receive = self._receive
        try:
            return receive.receive_nowait()
        except trio.WouldBlock:
            pass
        self._idle = True
        # The channel is empty, so receive() parks without a schedule point first; the put
        # that wakes it has cleared the flag before handing over its reply.
        item = await receive.receive()
        self._idle = False
        return item

    def discard_pending(self) -> None:
        """After the connection ended: release replies that will never be sent."""
        self._idle = False
        while True:
            try:
                item = self._receive.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                break
            if isinstance(item, _Unsent):
                close_regions(item.parts)
            else:
                self._discard(item)
        self._receive.close()


async def serve_connection(
    writer: ReplyWriter[R],
    read_loop: Callable[[], Awaitable[None]],
    name: str,
    reader: BudgetedReader,
    session: Session,
) -> None:
    """Run a connection: ``read_loop`` (which hands replies to ``writer``) beside the
    writer task, until the peer closes, misbehaves or the node shuts down; never raises.
    ``name`` says which connection in the log. Afterwards the reader gives back its
    budget, the session's close actions run and the stream is closed."""
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.run)
            try:
                await read_loop()
            finally:
                writer.finish()
    except* (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError) as group:
        log.debug("%s ended: %s", name, group.exceptions[0])
    except* Exception:
        log.exception("%s failed", name)
    finally:
        writer.discard_pending()
        reader.close()
        session.close()  # what its loss means (registered on the request path)
        await trio.aclose_forcefully(writer.stream)
