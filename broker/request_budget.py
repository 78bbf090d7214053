"""Reading requests within a node-wide byte budget and on time (both listeners use it).

Kafka's ``queued.max.request.bytes``: the bytes of requests a node holds while reading them
(received, not yet a whole frame) are bounded node-wide. Budget is taken as bytes arrive,
never for the size a frame announces, so announcing a 100 MiB frame costs nothing until
100 MiB were actually sent; a connection that finds the budget spent waits (it stops
reading, and TCP pushes back on its sender) instead of buffering. A frame's bytes return to
the budget as soon as the frame has been decoded.

Two deadlines close a connection: ``connections.max.idle.ms`` without a byte received, and a
frame that was started but not finished within ``frame_read_timeout_ms`` (a sender trickling
one byte a second is dropped rather than pinning its buffer and budget forever).

Connections authenticated as nodes read outside the budget: the cluster's own heartbeats and
replication must not wait behind clients' uploads.
"""

from __future__ import annotations

import collections
import math
import os
from collections.abc import Callable
from dataclasses import dataclass

import trio

from rillet.broker.client_quotas import ClientQuotas
from rillet.broker.errors import BrokerError
from rillet.broker.served_stream import ServedStream, wait_readable


class ReadDeadline(BrokerError):
    """A connection missed its idle or frame deadline (the message says which)."""

    def __init__(self, message: str, idle: bool) -> None:
        super().__init__(message)
        self.idle = idle


@dataclass(slots=True)
class _Waiter:
    bytes_wanted: int
    granted: trio.Event


class RequestBytesBudget:
    """A byte count shared by all connections of a node; waiters are served in order."""

    def __init__(self, capacity_bytes: int) -> None:
        self.capacity_bytes = capacity_bytes
        self._available = capacity_bytes
        self._waiters: collections.deque[_Waiter] = collections.deque()

    @property
    def available_bytes(self) -> int:
        return self._available

    @property
    def in_use_bytes(self) -> int:
        return self.capacity_bytes - self._available

    def try_take(self, n: int) -> bool:
        """Take ``n`` bytes if they are free and nobody waits for bytes; else take nothing."""
        if not self._waiters and self._available >= n:
            self._available -= n
            return True
        return False

    async def take(self, n: int) -> None:
        """Wait until ``n`` bytes are free and take them (first come, first served)."""
        if self.try_take(n):
            await trio.lowlevel.cancel_shielded_checkpoint()
            return
        waiter = _Waiter(n, trio.Event())
        self._waiters.append(waiter)
        try:
            await waiter.granted.wait()
        except BaseException:
            if waiter.granted.is_set():
                self.give(n)
            else:
                self._waiters.remove(waiter)
                self._wake()
            raise

    def give(self, n: int) -> None:
        self._available += n
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self._available >= self._waiters[0].bytes_wanted:
            waiter = self._waiters.popleft()
            self._available -= waiter.bytes_wanted
            waiter.granted.set()


class ReadTimers:
    """The idle and frame deadlines of one connection (sans I/O: times are arguments)."""

    def __init__(self, idle_timeout_s: float, frame_timeout_s: float, now: float) -> None:
        self._idle_s = idle_timeout_s
        self._frame_s = frame_timeout_s
        self._last_bytes_at = now
        self._frame_started_at: float | None = None
        self.must_authenticate_by: float | None = None  # a reserved connection's deadline

    def on_received(self, now: float) -> None:
        self._last_bytes_at = now

    def on_decoded(self, now: float, pending_bytes: int, frames: int) -> None:
        """After taking whole frames out: ``pending_bytes`` of a frame still incomplete."""
        if pending_bytes == 0:
            self._frame_started_at = None
        elif frames or self._frame_started_at is None:
            self._frame_started_at = now

    def deadline(self) -> float:
        candidates = [self._last_bytes_at + self._idle_s]
        if self._frame_started_at is not None:
            candidates.append(self._frame_started_at + self._frame_s)
        if self.must_authenticate_by is not None:
            candidates.append(self.must_authenticate_by)
        return min(candidates)

    def expired(self, now: float) -> ReadDeadline:
        if self.must_authenticate_by is not None and now >= self.must_authenticate_by:
            return ReadDeadline("did not authenticate as a node in time (reserved slot)", False)
        if self._frame_started_at is not None and now >= self._frame_started_at + self._frame_s:
            return ReadDeadline(
                f"a request frame was not finished within {self._frame_s:.3g}s "
                "(frame_read_timeout_ms)",
                False,
            )
        return ReadDeadline(
            f"idle for {self._idle_s:.3g}s (connections_max_idle_ms)",
            True,
        )


@dataclass(frozen=True, slots=True)
class ReadPolicy:
    """What every connection of a node reads under (from ``[limits]``)."""

    budget: RequestBytesBudget
    idle_timeout_s: float
    frame_timeout_s: float
    node_handshake_timeout_s: float
    # Byte-rate quotas per principal (``[quotas]``); None: no client is throttled.
    quotas: ClientQuotas | None = None

    @classmethod
    def unlimited(cls) -> ReadPolicy:
        """No budget and no deadlines (connections built outside a node, in tests)."""
        return cls(RequestBytesBudget(1 << 62), math.inf, math.inf, math.inf)


class BudgetedReader:
    """Reads a connection's bytes within the node's budget and the connection's deadlines.

    ``receive`` returns the next bytes (b"" at end of stream) or raises ReadDeadline;
    after decoding, ``decoded`` gives back the bytes no longer held; ``close`` gives back
    the rest. ``exempt()`` is true for a connection authenticated as a node.
    """

    def __init__(
        self,
        stream: ServedStream,
        budget: RequestBytesBudget,
        chunk_bytes: int,
        timers: ReadTimers,
        exempt: Callable[[], bool] = lambda: False,
    ) -> None:
        self._stream = stream
        self._budget = budget
        self._chunk = chunk_bytes
        self.timers = timers
        self._exempt = exempt
        self._charged = 0  # budget bytes this connection holds

    async def receive(self) -> bytes:
        """The next bytes. Waiting for them is the one schedule point when the budget has
        room and the stream is plain TCP: the bytes are then read at once, since every
        further yield costs a whole turn of the node's other tasks under load."""
        with trio.move_on_at(self.timers.deadline()):
            await wait_readable(self._stream)
            taken = 0
            if not self._exempt():
                if not self._budget.try_take(self._chunk):
                    await self._budget.take(self._chunk)
                taken = self._chunk
            try:
                now = self._read_now()
                data = now if now is not None else await self._stream.receive_some(self._chunk)
            except BaseException:
                self._budget.give(taken)
                raise
            self._budget.give(taken - min(taken, len(data)))
            self._charged += min(taken, len(data))
            self.timers.on_received(trio.current_time())
            return bytes(data) if isinstance(data, bytearray) else data
        raise self.timers.expired(trio.current_time())

    def _read_now(self) -> bytes | None:
        """One non-blocking read of a plain TCP stream (b"" at end of stream); None when
        nothing could be read that way (TLS, nothing there, an error: the stream's own
        receive then waits or raises as it should)."""
        stream = self._stream
        if not isinstance(stream, trio.SocketStream):
            return None
        try:
            return os.read(stream.socket.fileno(), self._chunk)
        except OSError:
            return None

    def decoded(self, pending_bytes: int, frames: int) -> None:
        """``pending_bytes``: what the decoder still holds; ``frames``: frames just taken."""
        if self._charged > pending_bytes:
            self._budget.give(self._charged - pending_bytes)
            self._charged = pending_bytes
        self.timers.on_decoded(trio.current_time(), pending_bytes, frames)

    def close(self) -> None:
        self._budget.give(self._charged)
        self._charged = 0
