"""The byte stream a listener serves: a TCP stream, or TLS over one.

Connections read and write through trio's stream interface either way; the few things that
need the socket itself go through here. Readiness waits look at the socket, so for TLS they
first ask whether decrypted bytes are already buffered (then there is nothing to wait for).
``sendfile`` needs the plain socket: over TLS, log bytes are read and sent encrypted.
"""

from __future__ import annotations

import logging
from typing import Any

import trio

log = logging.getLogger(__name__)

ServedStream = trio.SocketStream | trio.SSLStream[Any]


def socket_of(stream: ServedStream) -> trio.socket.SocketType:
    if isinstance(stream, trio.SSLStream):
        transport = stream.transport_stream
        assert isinstance(transport, trio.SocketStream)
        return transport.socket
    return stream.socket


def peer_host(stream: ServedStream) -> str:
    try:
        return str(socket_of(stream).getpeername()[0])
    except OSError:
        return "?"


def peer_address(stream: ServedStream) -> tuple[str, str]:
    """("host:port", "host") of the peer; ("?", "") once the socket is gone."""
    try:
        host, port = socket_of(stream).getpeername()[:2]
    except OSError:
        return "?", ""
    return f"{host}:{port}", str(host)


def peer_certificate(stream: ServedStream) -> dict[str, Any] | None:
    """The client's verified certificate on a TLS stream (mTLS), else None."""
    if isinstance(stream, trio.SSLStream):
        cert = stream.getpeercert()
        return cert or None
    return None


async def wait_readable(stream: ServedStream) -> None:
    """Until a read would return at once: bytes on the wire, or for TLS bytes already
    received and not yet returned. Those may be decrypted (``pending``) or still encrypted:
    a read returns one TLS record at a time, so records that arrived together wait in the
    stream's incoming buffer while the socket has nothing new. When the buffer cannot be
    inspected, nothing is waited for (a read then waits itself)."""
    if isinstance(stream, trio.SSLStream) and (
        stream.pending() > 0 or getattr(getattr(stream, "_incoming", None), "pending", 1) > 0
    ):
        await trio.lowlevel.checkpoint()
        return
    await trio.lowlevel.wait_readable(socket_of(stream))


async def tls_accept(
    stream: trio.SocketStream, context: Any, timeout_s: float
) -> trio.SSLStream[trio.SocketStream] | None:
    """The TLS stream once its handshake is done, or None (closed) when the handshake fails
    or takes longer than ``timeout_s``: a plaintext client on a TLS port, a client that does
    not trust this node's certificate, or one without the certificate mTLS requires."""
    tls = trio.SSLStream(stream, context, server_side=True)
    host = peer_host(stream)
    with trio.move_on_after(timeout_s):
        try:
            await tls.do_handshake()
            return tls
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            log.info("TLS handshake with %s failed: %s", host, exc.__cause__ or exc)
            await trio.aclose_forcefully(stream)
            return None
    log.info("TLS handshake with %s not finished in %.3gs: closed", host, timeout_s)
    await trio.aclose_forcefully(stream)
    return None
