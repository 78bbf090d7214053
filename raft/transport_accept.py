"""The accepting side of Raft connections, up to an authenticated peer: caps, deadline,
greeting, hello and welcome (the hello's checks are in transport_hello.py, the caps'
bookkeeping in inbound_connections.py; this is the thin trio driver around them).

A connection over a cap is closed before anything is read from it. An admitted one has
``handshake_timeout_ms`` from accept to finish its TLS handshake (if any) and send a hello
that passes :class:`HelloCheck`, which never asks for more than one small hello frame; else
it is closed and the reason logged at WARNING, at most once per source address per
:data:`WARNING_INTERVAL_S` (with the count of lines suppressed meanwhile). Only then is the
connection handed to the transport, which reads data frames (up to 64 MiB each) from it.
"""

from __future__ import annotations

import logging
import secrets
import ssl
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

import trio

from rillet.raft import peer_mac
from rillet.raft.inbound_connections import InboundConnections, InboundLimits
from rillet.raft.transport_frames import frame_bytes
from rillet.raft.transport_hello import MAGIC, BadHello, Hello, HelloCheck, welcome_mac
from rillet.raft.warning_limiter import WarningLimiter

log = logging.getLogger(__name__)

# A source whose connections keep being closed is logged at most once per this interval.
WARNING_INTERVAL_S = 10.0


@dataclass(frozen=True, slots=True)
class Accepted:
    """A connection whose peer proved the cluster secret."""

    peer: int
    nonce: bytes  # ours: the MAC of every frame the peer sends is over it
    stream: trio.abc.Stream


def peer_host(tcp: trio.SocketStream) -> str:
    try:
        address = tcp.socket.getpeername()
    except OSError:  # already reset: any name will do, it is closed at once
        return "?"
    return str(address[0]) if isinstance(address, tuple) else str(address)


class Acceptor:
    def __init__(
        self,
        key: bytes,
        node_id: int,
        peers: Collection[int],
        limits: InboundLimits,
        server_tls: Callable[[], ssl.SSLContext] | None = None,
    ) -> None:
        self._key = key
        self._node_id = node_id
        self._peers = frozenset(peers)
        self._timeout_s = limits.handshake_timeout_ms / 1000
        self._server_tls = server_tls
        self._inbound = InboundConnections(limits)
        self._scopes: dict[int, trio.CancelScope] = {}  # each peer's authenticated connection
        self._warnings = WarningLimiter(WARNING_INTERVAL_S)
        self.rejected = 0  # connections closed for a bad hello (failed MAC, oversized, ...)

    def set_peers(self, peers: Collection[int]) -> None:
        """Accept hellos from these ids from now on; close the connection of any peer that
        left (a removed voter or observer gets nothing more from us)."""
        self._peers = frozenset(peers)
        for peer, scope in list(self._scopes.items()):
            if peer not in self._peers:
                scope.cancel()

    async def serve(
        self, tcp: trio.SocketStream, authenticated: Callable[[Accepted], Awaitable[None]]
    ) -> None:
        """Handle one accepted connection: run ``authenticated`` on it once its peer proved
        the secret; close it when that returns, or at once when it does not get that far."""
        host = peer_host(tcp)
        admitted = self._inbound.admit(host)
        if admitted is None:  # over a cap: closed before anything is read or buffered
            self._warn(host, "over the Raft port's connection caps")
            await trio.aclose_forcefully(tcp)
            return
        try:
            accepted = await self._handshake(tcp, host)
            if accepted is None:
                return
            self._inbound.authenticated(admitted)
            with trio.CancelScope() as scope:
                previous = self._scopes.get(accepted.peer)
                if previous is not None:  # a peer dials anew once its last connection ended
                    previous.cancel()
                self._scopes[accepted.peer] = scope
                try:
                    await authenticated(accepted)
                finally:
                    if self._scopes.get(accepted.peer) is scope:
                        del self._scopes[accepted.peer]
        finally:
            self._inbound.release(admitted)
            await trio.aclose_forcefully(tcp)

    async def _handshake(self, tcp: trio.SocketStream, host: str) -> Accepted | None:
        stream: trio.abc.Stream = tcp
        nonce = secrets.token_bytes(peer_mac.NONCE_BYTES)
        try:
            with trio.fail_after(self._timeout_s):
                if self._server_tls is not None:
                    secured = trio.SSLStream(tcp, self._server_tls(), server_side=True)
                    await secured.do_handshake()
                    stream = secured
                verdict = await self._hello(stream, nonce)
        except trio.TooSlowError:
            self._warn(host, "no hello within the handshake deadline")
            return None
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            log.debug("raft connection from %s ended before its hello: %s", host, exc)
            return None
        if verdict is None:
            log.debug("raft connection from %s closed before its hello", host)
            return None
        if isinstance(verdict, BadHello):
            self.rejected += 1
            self._warn(host, verdict.reason)
            return None
        return Accepted(verdict.sender, nonce, stream)

    async def _hello(self, stream: trio.abc.Stream, nonce: bytes) -> Hello | BadHello | None:
        """Greet with ``nonce``, read the hello (never more than :class:`HelloCheck` asks
        for) and welcome an authentic one. None: the connection closed first."""
        await stream.send_all(MAGIC + nonce)
        check = HelloCheck(self._key, nonce, self._node_id, self._peers)
        verdict = None
        while verdict is None:
            data = await stream.receive_some(check.wanted)
            if not data:
                return None
            verdict = check.feed(data)
        if isinstance(verdict, Hello):
            await stream.send_all(frame_bytes(welcome_mac(self._key, verdict.nonce, nonce), b""))
        return verdict

    def _warn(self, host: str, reason: str) -> None:
        suppressed = self._warnings.allow(host, trio.current_time())
        if suppressed:
            log.warning(
                "raft port: closed a connection from %s: %s (%d more not logged since the "
                "previous line)",
                host,
                reason,
                suppressed,
            )
        elif suppressed is not None:
            log.warning("raft port: closed a connection from %s: %s", host, reason)
