"""Per-link TCP proxies on loopback: the layer through which the harness cuts the network.

Every node reaches every other node's Raft port and client listener through a proxy of its
own link: node 1 dials node 2 at ``link_port(1, 2, "raft")``, which forwards to node 2's real
Raft port. So the harness knows which node sent every byte, without root, iptables or
network namespaces, and can drop a link in one direction only.

A cut behaves like a firewall that drops packets, not like a reset: bytes travelling over a
blocked direction are held (the proxy stops reading them, so they wait in the kernel's
buffers and the sender's writes eventually block), and a new connection over a blocked link
is accepted but not forwarded. Nobody is told: nodes notice only through their own timeouts,
as they would in a real partition. When the link heals the held bytes flow on, like TCP
retransmissions after a partition heals, unless an end gave up and closed its connection
meanwhile.

Directions are judged per byte, not per connection: with 1→2 blocked, node 2 still hears
nothing from node 1 on connections node 2 opened (responses from 1 are held), while 2→1
bytes flow. That is the one-way partition of docs/chaos.md.

The proxies run a trio loop in a daemon thread; ``cut``/``heal`` are called from the
harness thread. Their state is a set of blocked directed pairs and a ``trio.Event`` that is
replaced at every change, which wakes every pump waiting on the gate.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass

import trio

from rillet.chaos.errors import ChaosError

HOST = "127.0.0.1"
RECEIVE_BYTES = 64 * 1024
CONNECT_TIMEOUT_S = 5.0
START_TIMEOUT_S = 10.0


class LinkProxyError(ChaosError):
    """The proxies could not start or stop."""


@dataclass(frozen=True, slots=True)
class Link:
    """One directed route: ``src`` reaches ``dst``'s ``kind`` port through ``proxy_port``."""

    src: int
    dst: int
    kind: str
    target_port: int
    proxy_port: int


class _Gate:
    """Which directed node pairs are blocked, and an event that fires on every change."""

    def __init__(self) -> None:
        self.blocked: frozenset[tuple[int, int]] = frozenset()
        self.changed = trio.Event()

    def set(self, blocked: frozenset[tuple[int, int]]) -> None:
        self.blocked = blocked
        self.changed.set()
        self.changed = trio.Event()

    async def wait_open(self, src: int, dst: int) -> None:
        while (src, dst) in self.blocked:
            await self.changed.wait()


class LinkProxies:
    """A proxy per directed link and port, created as the cluster's configs are planned.

    ``route`` (a ``local_cluster.Route``) binds the proxy's listening socket at once, so
    the port is known for the nodes' configs before anything runs; ``start`` begins
    forwarding.
    """

    def __init__(self) -> None:
        self._links: list[Link] = []
        self._sockets: list[socket.socket] = []
        self._thread: threading.Thread | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._gate: _Gate | None = None
        self._started = threading.Event()
        self._stop: trio.Event | None = None
        self._blocked: frozenset[tuple[int, int]] = frozenset()

    def route(self, src: int, dst: int, kind: str, target_port: int) -> int:
        """The port ``src`` dials to reach ``dst``'s ``kind`` port (a new proxy for it)."""
        if self._thread is not None:
            raise LinkProxyError("links must be planned before the proxies start")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, 0))
        sock.listen(64)
        self._sockets.append(sock)
        port: int = sock.getsockname()[1]
        self._links.append(Link(src, dst, kind, target_port, port))
        return port

    @property
    def links(self) -> list[Link]:
        return list(self._links)

    def link_port(self, src: int, dst: int, kind: str) -> int:
        """The port ``src`` dials to reach ``dst``'s ``kind`` port."""
        for link in self._links:
            if (link.src, link.dst, link.kind) == (src, dst, kind):
                return link.proxy_port
        raise KeyError((src, dst, kind))

    @property
    def blocked(self) -> frozenset[tuple[int, int]]:
        return self._blocked

    # -- control (harness thread) ---------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._main, name="link-proxies", daemon=True)
        self._thread.start()
        if not self._started.wait(START_TIMEOUT_S):
            raise LinkProxyError("the link proxies did not start")

    def cut(self, pairs: Iterable[tuple[int, int]]) -> None:
        """Block bytes from ``src`` to ``dst`` for each (src, dst) in ``pairs``."""
        self._apply(self._blocked | frozenset(pairs))

    def heal(self, pairs: Iterable[tuple[int, int]] | None = None) -> None:
        """Unblock ``pairs`` (all links when None)."""
        self._apply(frozenset() if pairs is None else self._blocked - frozenset(pairs))

    def close(self) -> None:
        """Stop forwarding and close every socket (bounded; safe to call twice)."""
        thread, token, stop = self._thread, self._token, self._stop
        if thread is not None and token is not None and stop is not None:
            try:
                trio.from_thread.run_sync(stop.set, trio_token=token)
            except trio.RunFinishedError:
                pass
            thread.join(START_TIMEOUT_S)
        self._thread = None
        for sock in self._sockets:
            sock.close()

    def __enter__(self) -> LinkProxies:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _apply(self, blocked: frozenset[tuple[int, int]]) -> None:
        self._blocked = blocked
        gate, token = self._gate, self._token
        if gate is None or token is None:
            raise LinkProxyError("the link proxies are not running")
        trio.from_thread.run_sync(gate.set, blocked, trio_token=token)

    # -- forwarding (proxy thread) --------------------------------------------------------

    def _main(self) -> None:
        trio.run(self._serve_all)

    async def _serve_all(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._gate = _Gate()
        self._stop = trio.Event()
        async with trio.open_nursery() as nursery:
            for link, sock in zip(self._links, self._sockets, strict=True):
                listener = trio.SocketListener(trio.socket.from_stdlib_socket(sock.dup()))
                nursery.start_soon(self._accept_loop, link, listener, nursery)
            self._started.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    async def _accept_loop(
        self, link: Link, listener: trio.SocketListener, nursery: trio.Nursery
    ) -> None:
        async with listener:
            while True:
                try:
                    stream = await listener.accept()
                except OSError:
                    return
                nursery.start_soon(self._forward, link, stream)

    async def _forward(self, link: Link, client: trio.SocketStream) -> None:
        """One connection from ``link.src``: connect upstream once the link lets SYNs through."""
        gate = self._gate
        assert gate is not None
        async with client:
            await gate.wait_open(link.src, link.dst)
            try:
                with trio.fail_after(CONNECT_TIMEOUT_S):
                    upstream = await trio.open_tcp_stream(HOST, link.target_port)
            except (OSError, trio.TooSlowError):
                return  # the node is down: the dialer sees its connection close, like a RST
            async with upstream, trio.open_nursery() as pumps:
                pumps.start_soon(self._pump, client, upstream, link.src, link.dst, pumps)
                pumps.start_soon(self._pump, upstream, client, link.dst, link.src, pumps)

    async def _pump(
        self,
        source: trio.SocketStream,
        sink: trio.SocketStream,
        src: int,
        dst: int,
        pumps: trio.Nursery,
    ) -> None:
        """Copy bytes one way while (src, dst) is open; either end closing ends both."""
        gate = self._gate
        assert gate is not None
        try:
            while True:
                await gate.wait_open(src, dst)
                data = await source.receive_some(RECEIVE_BYTES)
                if not data:
                    break
                await gate.wait_open(src, dst)  # cut while these bytes were in hand: hold them
                await sink.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        pumps.cancel_scope.cancel()
