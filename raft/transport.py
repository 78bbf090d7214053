"""Authenticated message transport between Raft voters, on trio (no pickle, ever).

Each voter sends to each peer over a connection it opens (one direction per connection), and
receives on the connections its peers open to it. Raft tolerates lost, duplicated and
reordered messages, so the transport keeps no promise beyond "a message that arrives is
authentic and unmodified": a full send queue drops the newest message, a broken connection
drops what was queued, and a peer that is down is retried with bounded backoff.

It also tells the driver when a peer's process is gone (``peer_down``): a connection to the
peer's port was refused, which on TCP means nothing listens there -- the process died or
closed its listener -- as opposed to a timeout, which a slow, paused or cut-off peer also
causes. The receiving side never writes after the handshake, so the sending side also reads
its outgoing connection: a peer that dies closes it at once (the kernel closes a killed
process's sockets), and the immediate reconnect is what gets refused.

Authentication, with a key derived from the cluster secret (HMAC-SHA256 throughout):

1. the receiver sends a greeting with a fresh random nonce;
2. the sender answers with a hello (its id, the receiver's id, its own nonce) MACed over the
   receiver's nonce; the receiver checks it and answers with a proof MACed over the sender's
   nonce, so both sides know the other holds the secret;
3. every data frame is ``[length u32][MAC 32 bytes][payload]``, the MAC over the receiver's
   nonce, a frame sequence number and the payload: a frame cannot be forged, altered,
   replayed into another connection or reordered within one.

A frame that fails its check closes the connection (the peer reconnects); nothing from an
unauthenticated peer ever reaches the Raft core. Until a peer is authenticated it gets no
more than a hello of a few dozen bytes, a deadline and a capped number of connections
(transport_accept.py); data frames are read only after that.

With :class:`PeerTls` every connection is TLS first (the node's certificate both ways; the
dialer checks the peer's against the host it dials), then the same handshake and MACs run
inside it: TLS encrypts, the MACs still prove the cluster secret.
"""

from __future__ import annotations

import errno
import logging
import os
import secrets
import ssl
import struct
from collections.abc import Callable, Collection, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any

import trio

from rillet.raft import peer_mac
from rillet.raft.inbound_connections import InboundLimits
from rillet.raft.transport_accept import Accepted, Acceptor
from rillet.raft.transport_frames import (
    Framed,
    FrameReader,
    Link,
    TransportError,
)
from rillet.raft.transport_hello import MAGIC, hello_frame, welcome_mac

__all__ = [
    "MAGIC",
    "InboundLimits",
    "PeerAddress",
    "PeerTls",
    "RaftTransport",
    "TransportError",
    "connection_refused",
]

log = logging.getLogger(__name__)

NONCE_BYTES = peer_mac.NONCE_BYTES
HANDSHAKE_TIMEOUT_S = 5.0  # dialing side; the accepting side's is a setting (InboundLimits)
INITIAL_BACKOFF_S = 0.05
MAX_BACKOFF_S = 1.0
# A connection that lasted this long is reconnected at once when it ends; shorter ones are
# flaps (a peer that accepts and hangs up) and back off. Short: a voter restarted less than
# a second before it was killed again must be found refusing at once too (traced: a 1 s
# threshold made the backoff grow over repeated kills and delayed the report by up to 1 s).
STABLE_CONNECTION_S = 0.1
# Peer-down reports not yet taken by the driver; more are dropped (they are advisory).
PEER_DOWN_QUEUE_REPORTS = 64
# Messages a connection hands to the driver between two yields when they arrive together.
DELIVER_SLICE_MESSAGES = 64

# A message handler: (peer, payload, more) -> None, or a coroutine to await before reading on.
Deliver = Callable[[int, bytes, bool], "Coroutine[Any, Any, None] | None"]


@dataclass(frozen=True, slots=True)
class PeerTls:
    """Where the transport gets its TLS contexts (called per connection, so rotated
    certificates are used from the next connection on)."""

    server: Callable[[], ssl.SSLContext]
    client: Callable[[], ssl.SSLContext]


@dataclass(frozen=True, slots=True)
class PeerAddress:
    host: str
    port: int


def derive_key(secret: str) -> bytes:
    return peer_mac.derive_key(secret, b"rillet raft transport v1")


_mac = peer_mac.mac_parts


def connection_refused(exc: BaseException) -> bool:
    """Whether ``exc`` is a refused connect (every address tried answered with a reset):
    proof that no process listens on the peer's port, unlike a timeout or an unreachable
    network, which a live but slow or cut-off peer causes too. ``trio.open_tcp_stream``
    raises a plain OSError whose cause groups the error of each address it tried."""
    if isinstance(exc, OSError) and exc.errno == errno.ECONNREFUSED:
        return True
    cause = exc.__cause__
    if isinstance(cause, BaseExceptionGroup):
        return bool(cause.exceptions) and all(connection_refused(e) for e in cause.exceptions)
    return False


class RaftTransport:
    """Messages between this voter and its peers. ``run`` hosts the tasks; ``send`` never
    blocks; ``receive`` yields ``(peer id, payload)`` of authenticated messages."""

    def __init__(
        self,
        node_id: int,
        peers: Mapping[int, PeerAddress],
        secret: str,
        listen: PeerAddress,
        queue_messages: int = 4096,
        tls: PeerTls | None = None,
        limits: InboundLimits | None = None,
    ) -> None:
        if len(secret) < 16:
            raise TransportError("the cluster secret must be at least 16 characters")
        self.node_id = node_id
        self._peers = {p: a for p, a in peers.items() if p != node_id}
        self._queue_messages = queue_messages
        self._key = derive_key(secret)
        self._listen = listen
        self._tls = tls
        self._acceptor = Acceptor(
            self._key,
            node_id,
            self._peers,
            limits or InboundLimits(),
            tls.server if tls is not None else None,
        )
        self._outboxes = {
            p: trio.open_memory_channel[bytes | Framed](queue_messages) for p in self._peers
        }
        self._links: dict[int, Link] = {}  # the live connection to each peer
        self._inbox_send, self._inbox = trio.open_memory_channel[tuple[int, bytes]](queue_messages)
        self._deliver: Deliver | None = None
        self._down_send, self._down = trio.open_memory_channel[int](PEER_DOWN_QUEUE_REPORTS)
        # Set when a peer authenticates a connection to us: it is up, so our own connection
        # to it need not wait out its backoff (a restarted voter is reached at once).
        self._peer_up = {p: trio.Event() for p in self._peers}
        # Each peer's send loop, cancelled when the peer leaves (set_peers).
        self._send_scopes: dict[int, trio.CancelScope] = {}
        self._nursery: trio.Nursery | None = None
        self.dropped = 0  # messages not sent (full queue or broken connection)
        self.direct_writes = 0  # messages written at once by send()
        self.port: int | None = None

    @property
    def rejected(self) -> int:
        """Connections closed for a bad hello (failed MAC, oversized, ...)."""
        return self._acceptor.rejected

    async def run(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(self._listen.port, host=self._listen.host)
        self.port = listeners[0].socket.getsockname()[1]
        async with trio.open_nursery() as nursery:
            await nursery.start(trio.serve_listeners, self._serve, listeners)
            self._nursery = nursery
            for peer in self._peers:
                self._start_send_loop(peer)
            task_status.started(self.port)

    def peers(self) -> dict[int, PeerAddress]:
        return dict(self._peers)

    def set_peers(self, peers: Mapping[int, PeerAddress], accept: Collection[int] = ()) -> None:
        """Talk to exactly these peers from now on (the Raft configuration changed, or an
        observer came or went): links to new peers open, links to peers that left close
        with what was queued for them, and a peer whose address changed is dialed anew.
        Connections are accepted from ``peers`` and from ``accept`` (replicas we do not
        dial, such as the voters an observer answers only once they have reached it)."""
        wanted = {p: a for p, a in peers.items() if p != self.node_id}
        for peer in [p for p in self._peers if wanted.get(p) != self._peers[p]]:
            self._peers.pop(peer)
            self._outboxes.pop(peer)
            self._peer_up.pop(peer, None)
            scope = self._send_scopes.pop(peer, None)
            if scope is not None:
                scope.cancel()
        for peer, address in wanted.items():
            if peer not in self._peers:
                self._peers[peer] = address
                self._outboxes[peer] = trio.open_memory_channel[bytes | Framed](
                    self._queue_messages
                )
                self._peer_up[peer] = trio.Event()
                if self._nursery is not None:
                    self._start_send_loop(peer)
        self._acceptor.set_peers(set(self._peers) | set(accept))

    def _start_send_loop(self, peer: int) -> None:
        assert self._nursery is not None
        scope = self._send_scopes[peer] = trio.CancelScope()
        outbox = self._outboxes[peer][1]

        async def loop() -> None:
            with scope:
                await self._send_loop(peer, outbox)

        self._nursery.start_soon(loop)

    def send(self, to: int, payload: bytes) -> bool:
        """Send ``payload`` to peer ``to``: written at once when its connection is idle,
        else queued; False (dropped) when its queue is full."""
        channel = self._outboxes.get(to)
        if channel is None:
            raise TransportError(f"unknown peer {to}")
        item: bytes | Framed = payload
        link = self._links.get(to)
        if link is not None and link.idle and link.fd >= 0:
            data = link.frame(self._key, payload)
            try:
                sent = os.write(link.fd, data)
            except OSError:  # full (BlockingIOError) or broken: the send loop finds out
                sent = 0
            if sent == len(data):
                self.direct_writes += 1
                return True
            item = Framed(link, data[sent:])
        if link is not None:
            link.idle = False  # the send loop has this to write first
        try:
            channel[0].send_nowait(item)
        except trio.WouldBlock:
            self.dropped += 1
            return False
        return True

    def deliver_to(self, handler: Deliver) -> None:
        """Hand each authenticated message to ``handler(peer, payload, more)`` from the task
        that read it, instead of queueing it for :meth:`receive` (one turn of the event
        loop less per message; the handler must not block). ``more``: bytes of further
        messages were read with it. The handler may return a coroutine: the task awaits it
        before reading the next message (a follower's sync in a worker thread, before its
        acknowledgement). Call before :meth:`run`."""
        self._deliver = handler

    async def receive(self) -> tuple[int, bytes]:
        return await self._inbox.receive()

    async def peer_down(self) -> int:
        """The next peer whose port refused a connection: its process is not running.
        Reported on every refused attempt (about one per backoff step while it stays down)."""
        return await self._down.receive()

    # -- receiving ----------------------------------------------------------------------------

    async def _serve(self, tcp: trio.SocketStream) -> None:
        await self._acceptor.serve(tcp, self._receive)

    async def _receive(self, accepted: Accepted) -> None:
        up = self._peer_up.get(accepted.peer)
        if up is not None:
            up.set()
        try:
            await self._receive_frames(accepted.peer, accepted.nonce, FrameReader(accepted.stream))
        except TransportError as exc:
            log.debug("raft connection ended: %s", exc)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            log.debug("raft connection ended: %s", exc)

    async def _receive_frames(self, peer: int, nonce: bytes, reader: FrameReader) -> None:
        sequence = 0
        deliver = self._deliver
        while True:
            mac, payload = await reader.read_frame()
            if not peer_mac.macs_equal(
                mac, _mac(self._key, nonce, struct.pack(">Q", sequence), payload)
            ):
                raise TransportError(f"frame {sequence} from {peer} failed authentication")
            sequence += 1
            if deliver is None:
                await self._inbox_send.send((peer, payload))
                continue
            rest = deliver(peer, payload, reader.buffered)
            if rest is not None:
                await rest
            if reader.buffered and sequence % DELIVER_SLICE_MESSAGES == 0:
                # A burst already read is handed over without waiting for the socket:
                # let other tasks run between slices of it.
                await trio.lowlevel.checkpoint()

    # -- sending ------------------------------------------------------------------------------

    async def _send_loop(
        self, peer: int, receive: trio.MemoryReceiveChannel[bytes | Framed]
    ) -> None:
        backoff = INITIAL_BACKOFF_S  # between failed connects
        flap_backoff = INITIAL_BACKOFF_S  # after connections that ended as soon as made
        while True:
            try:
                stream, nonce = await self._connect(peer)
            except (OSError, TransportError, trio.TooSlowError, trio.BrokenResourceError) as exc:
                log.debug("raft peer %d unreachable: %s", peer, exc)
                if connection_refused(exc):
                    self._report_down(peer)
                self._drain(receive)  # stale messages are worthless after a pause
                up = trio.Event()
                if peer in self._peer_up:
                    self._peer_up[peer] = up
                with trio.move_on_after(backoff):
                    await up.wait()  # it connected to us: it is back, try again now
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            backoff = INITIAL_BACKOFF_S
            connected_at_s = trio.current_time()
            link = self._links[peer] = Link(stream, nonce)
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._watch_closed, stream, nursery.cancel_scope)
                    try:
                        await self._pump(stream, link, receive)
                    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                        log.debug("raft connection to %d broke: %s", peer, exc)
                    nursery.cancel_scope.cancel()
            finally:
                link.idle = False
                if self._links.get(peer) is link:  # else the peer left and came back
                    del self._links[peer]
                await trio.aclose_forcefully(stream)
            # After a break of a connection that had lasted, reconnect at once: the peer that
            # closed it may be dead, and a refused connect lets the driver react within a
            # tick. Connections that end as soon as they are made back off (from 50 ms, and
            # longer only while they keep doing so), so a peer that accepts and hangs up
            # cannot make this a busy loop.
            if trio.current_time() - connected_at_s >= STABLE_CONNECTION_S:
                flap_backoff = INITIAL_BACKOFF_S
            else:
                await trio.sleep(flap_backoff)
                flap_backoff = min(flap_backoff * 2, MAX_BACKOFF_S)

    async def _connect(self, peer: int) -> tuple[trio.abc.Stream, bytes]:
        """Open and authenticate a connection; returns it and the receiver's nonce."""
        address = self._peers.get(peer)
        if address is None:
            raise TransportError(f"peer {peer} left")
        with trio.fail_after(HANDSHAKE_TIMEOUT_S):
            tcp = await trio.open_tcp_stream(address.host, address.port)
            stream: trio.abc.Stream = tcp
            try:
                if self._tls is not None:
                    secured = trio.SSLStream(tcp, self._tls.client(), server_hostname=address.host)
                    await secured.do_handshake()
                    stream = secured
                reader = FrameReader(stream)
                greeting = await reader.read_exactly(len(MAGIC) + NONCE_BYTES)
                if not greeting.startswith(MAGIC):
                    raise TransportError(f"peer {peer} does not speak the raft transport")
                nonce = greeting[len(MAGIC) :]
                mine = secrets.token_bytes(NONCE_BYTES)
                await stream.send_all(hello_frame(self._key, nonce, self.node_id, peer, mine))
                mac, _ = await reader.read_frame()
                if not peer_mac.macs_equal(mac, welcome_mac(self._key, mine, nonce)):
                    raise TransportError(f"peer {peer} failed authentication")
            except BaseException:
                await trio.aclose_forcefully(tcp)
                raise
        return stream, nonce

    async def _pump(
        self,
        stream: trio.abc.Stream,
        link: Link,
        receive: trio.MemoryReceiveChannel[bytes | Framed],
    ) -> None:
        while True:
            try:
                first = receive.receive_nowait()
            except trio.WouldBlock:
                link.idle = True  # send() writes directly until it queues something
                first = await receive.receive()
            batch = [first]
            while len(batch) < 256:  # coalesce what is queued into one send
                try:
                    batch.append(receive.receive_nowait())
                except trio.WouldBlock:
                    break
            out = bytearray()
            for item in batch:
                if isinstance(item, Framed):
                    if item.link is link:  # else framed for a connection that broke
                        out += item.data
                else:
                    out += link.frame(self._key, item)
            if out:
                await stream.send_all(bytes(out))

    async def _watch_closed(self, stream: trio.abc.Stream, scope: trio.CancelScope) -> None:
        """End the connection (cancel ``scope``) when the peer closes or resets it. The
        receiver sends nothing after the handshake, so any read that returns is the end.
        Without this a dead peer went unnoticed until we next had something to send -- and
        a follower sends nothing to a leader that has stopped sending to it."""
        try:
            await stream.receive_some(1)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            log.debug("raft connection ended by the peer: %s", exc)
        scope.cancel()

    def _report_down(self, peer: int) -> None:
        try:
            self._down_send.send_nowait(peer)
        except trio.WouldBlock:
            pass  # the driver has reports it has not read yet; one more adds nothing

    def _drain(self, receive: trio.MemoryReceiveChannel[bytes | Framed]) -> None:
        while True:
            try:
                receive.receive_nowait()
            except trio.WouldBlock:
                return
            self.dropped += 1
