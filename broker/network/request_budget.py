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

Which part of the budget a connection draws on depends on whether it has logged in and as
whom (broker/network/read_shares.py); a connection that has not logged in also reads at most one
pre-authentication frame at a time. Connections authenticated as nodes read outside the
budget: the cluster's own heartbeats and replication must not wait behind clients' uploads.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio

from rillet.broker.errors import BrokerError
from rillet.broker.network.client_quotas import ClientQuotas
from rillet.broker.network.decode_offload import DecodeOffload
from rillet.broker.network.read_shares import ByteBudget, ReadShares, RequestBytesBudget
from rillet.broker.network.served_stream import ServedStream, wait_readable

if TYPE_CHECKING:
    from rillet.broker.config.limits_config import LimitsConfig


class ReadDeadline(BrokerError):
    """A connection missed its idle or frame deadline (the message says which)."""

    def __init__(self, message: str, idle: bool) -> None:
        super().__init__(message)
        self.idle = idle


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
    # The budget per class of connection; None: ``budget`` for every connection.
    shares: ReadShares | None = None
    # sasl.server.max.receive.size: the frame limit before a connection has logged in.
    preauth_max_frame_bytes: int = 512 * 1024
    offload: DecodeOffload = field(default_factory=DecodeOffload)

    @classmethod
    def for_limits(cls, limits: LimitsConfig, quotas: ClientQuotas | None = None) -> ReadPolicy:
        """The policy of a node with these ``[limits]``."""
        authenticated = RequestBytesBudget(limits.authenticated_queued_max_request_bytes)
        return cls(
            authenticated,
            limits.connections_max_idle_ms / 1000,
            limits.frame_read_timeout_ms / 1000,
            limits.node_handshake_timeout_ms / 1000,
            quotas,
            ReadShares(
                authenticated,
                limits.principal_queued_max_request_bytes,
                RequestBytesBudget(limits.unauthenticated_queued_max_request_bytes),
            ),
            limits.sasl_server_max_receive_size,
            DecodeOffload(limits.request_decode_offload_bytes, limits.request_decode_threads),
        )

    @classmethod
    def unlimited(cls) -> ReadPolicy:
        """No budget and no deadlines (connections built outside a node, in tests)."""
        return cls(RequestBytesBudget(1 << 62), math.inf, math.inf, math.inf)

    def read_class(self, principal: str | None, chunk_bytes: int) -> ReadClass:
        """What a connection of ``principal`` (None: not logged in) reads under."""
        shares = self.shares or ReadShares.single(self.budget)
        if principal is None:
            chunk = min(chunk_bytes, self.preauth_max_frame_bytes + 4)
            return ReadClass(shares.unauthenticated, chunk)
        return ReadClass(shares.for_principal(principal), chunk_bytes)


@dataclass(frozen=True, slots=True)
class ReadClass:
    """The budget a connection takes its bytes from now, and how much it reads at once;
    ``budget`` None for a connection authenticated as a node (outside every budget)."""

    budget: ByteBudget | None
    chunk_bytes: int


@dataclass(slots=True)
class _Held:
    budget: ByteBudget
    n_bytes: int


class BudgetedReader:
    """Reads a connection's bytes within the node's budget and the connection's deadlines.

    ``receive`` returns the next bytes (b"" at end of stream) or raises ReadDeadline;
    after decoding, ``decoded`` gives back the bytes no longer held; ``close`` gives back
    the rest. ``classify()`` is the connection's class now (it changes when the connection
    logs in); bytes go back to the budget they were taken from, oldest first.
    """

    def __init__(
        self,
        stream: ServedStream,
        budget: ByteBudget,
        chunk_bytes: int,
        timers: ReadTimers,
        classify: Callable[[], ReadClass] | None = None,
    ) -> None:
        self._stream = stream
        fixed = ReadClass(budget, chunk_bytes)
        self._classify = classify or (lambda: fixed)
        self.timers = timers
        self._held: list[_Held] = []  # oldest first

    async def receive(self) -> bytes:
        """The next bytes. Waiting for them is the one schedule point when the budget has
        room and the stream is plain TCP: the bytes are then read at once, since every
        further yield costs a whole turn of the node's other tasks under load."""
        with trio.move_on_at(self.timers.deadline()):
            await wait_readable(self._stream)
            read_class = self._classify()
            budget, chunk = read_class.budget, read_class.chunk_bytes
            if budget is not None and not budget.try_take(chunk):
                await budget.take(chunk)
            taken = 0 if budget is None else chunk
            try:
                now = self._read_now(chunk)
                data = now if now is not None else await self._stream.receive_some(chunk)
            except BaseException:
                if budget is not None:
                    budget.give(taken)
                raise
            if budget is not None:
                kept = min(taken, len(data))
                budget.give(taken - kept)
                self._hold(budget, kept)
            self.timers.on_received(trio.current_time())
            return bytes(data) if isinstance(data, bytearray) else data
        raise self.timers.expired(trio.current_time())

    def _hold(self, budget: ByteBudget, n: int) -> None:
        if self._held and self._held[-1].budget is budget:
            self._held[-1].n_bytes += n
        elif n:
            self._held.append(_Held(budget, n))

    def _read_now(self, chunk_bytes: int) -> bytes | None:
        """One non-blocking read of a plain TCP stream (b"" at end of stream); None when
        nothing could be read that way (TLS, nothing there, an error: the stream's own
        receive then waits or raises as it should)."""
        stream = self._stream
        if not isinstance(stream, trio.SocketStream):
            return None
        try:
            return os.read(stream.socket.fileno(), chunk_bytes)
        except OSError:
            return None

    def decoded(self, pending_bytes: int, frames: int) -> None:
        """``pending_bytes``: what the decoder still holds; ``frames``: frames just taken."""
        self._release(self.held_bytes - pending_bytes)
        self.timers.on_decoded(trio.current_time(), pending_bytes, frames)

    @property
    def held_bytes(self) -> int:
        """Budget bytes this connection holds."""
        return sum(h.n_bytes for h in self._held)

    def _release(self, n: int) -> None:
        """Give back ``n`` held bytes, those taken first first."""
        while n > 0 and self._held:
            oldest = self._held[0]
            part = min(n, oldest.n_bytes)
            oldest.budget.give(part)
            oldest.n_bytes -= part
            n -= part
            if not oldest.n_bytes:
                self._held.pop(0)

    def close(self) -> None:
        self._release(self.held_bytes)
