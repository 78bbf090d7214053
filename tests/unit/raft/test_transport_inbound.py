"""What the Raft port does with peers that have not authenticated, on real loopback sockets:
connections over the per-address cap are closed before anything is read; an oversized
hello, a forged one or none within the deadline closes the connection, with a rate-limited
WARNING; a peer that authenticates again replaces its previous connection."""

from __future__ import annotations

import logging
import struct

import pytest
import trio
from test_transport import SECRET, free_port

from rillet.raft.inbound_connections import InboundLimits
from rillet.raft.transport import (
    MAGIC,
    NONCE_BYTES,
    PeerAddress,
    RaftTransport,
    derive_key,
)
from rillet.raft.transport_hello import hello_frame

LIMITS = InboundLimits(max_connections=8, max_connections_per_ip=2, handshake_timeout_ms=300)
GREETING_BYTES = len(MAGIC) + NONCE_BYTES


def transport(limits: InboundLimits = LIMITS) -> RaftTransport:
    peers = {i: PeerAddress("127.0.0.1", free_port()) for i in (1, 2)}
    return RaftTransport(1, peers, SECRET, peers[1], limits=limits)


async def greeted(port: int) -> tuple[trio.SocketStream, bytes]:
    """A raw connection and the receiver's nonce from its greeting."""
    raw = await trio.open_tcp_stream("127.0.0.1", port)
    greeting = b""
    while len(greeting) < GREETING_BYTES:
        chunk = await raw.receive_some(GREETING_BYTES - len(greeting))
        assert chunk, "closed before the greeting"
        greeting += chunk
    return raw, greeting[len(MAGIC) :]


async def closed_on_us(raw: trio.SocketStream) -> bool:
    try:
        return await raw.receive_some(1024) == b""
    except trio.BrokenResourceError:  # reset: unread bytes of ours were discarded
        return True


async def test_connections_over_the_address_cap_are_closed_before_any_greeting() -> None:
    a = transport()
    async with trio.open_nursery() as nursery:
        await nursery.start(a.run)
        assert a.port is not None
        with trio.fail_after(5):
            held = [await greeted(a.port) for _ in range(2)]
            for _ in range(3):
                extra = await trio.open_tcp_stream("127.0.0.1", a.port)
                assert await closed_on_us(extra)  # no greeting: nothing was done for it
                await extra.aclose()
        for raw, _ in held:
            await raw.aclose()
        nursery.cancel_scope.cancel()


async def test_a_connection_without_a_hello_is_closed_at_the_deadline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    a = transport()
    caplog.set_level(logging.WARNING, logger="rillet.raft")
    async with trio.open_nursery() as nursery:
        await nursery.start(a.run)
        assert a.port is not None
        with trio.fail_after(5):
            started = trio.current_time()  # before the connect: the deadline starts later
            raw, _ = await greeted(a.port)
            await raw.send_all(b"\0\0")  # half a header, then nothing
            assert await closed_on_us(raw)
            assert 0.3 <= trio.current_time() - started < 3
        await raw.aclose()
        nursery.cancel_scope.cancel()
    assert "no hello within the handshake deadline" in caplog.text


async def test_an_oversized_hello_closes_at_once_and_warnings_are_rate_limited(
    caplog: pytest.LogCaptureFixture,
) -> None:
    a = transport()
    caplog.set_level(logging.WARNING, logger="rillet.raft")
    async with trio.open_nursery() as nursery:
        await nursery.start(a.run)
        assert a.port is not None
        with trio.fail_after(5):
            for _ in range(3):
                raw, _ = await greeted(a.port)
                await raw.send_all(struct.pack(">I", 60 * 1024 * 1024) + b"\0" * 65536)
                assert await closed_on_us(raw)
                await raw.aclose()
        nursery.cancel_scope.cancel()
    lines = [r for r in caplog.records if "closed a connection from 127.0.0.1" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    assert "declared a hello of 62914560 bytes" in lines[0].getMessage()
    assert a.rejected == 3


async def test_a_forged_hello_is_logged_at_warning(caplog: pytest.LogCaptureFixture) -> None:
    a = transport()
    caplog.set_level(logging.WARNING, logger="rillet.raft")
    forged_key = derive_key("another-secret-entirely")
    async with trio.open_nursery() as nursery:
        await nursery.start(a.run)
        assert a.port is not None
        with trio.fail_after(5):
            raw, nonce = await greeted(a.port)
            await raw.send_all(hello_frame(forged_key, nonce, 2, 1, bytes(NONCE_BYTES)))
            assert await closed_on_us(raw)
        await raw.aclose()
        nursery.cancel_scope.cancel()
    assert "hello failed authentication" in caplog.text
    assert a.rejected == 1


async def test_a_peer_that_authenticates_again_replaces_its_previous_connection() -> None:
    a = transport()
    key = derive_key(SECRET)
    async with trio.open_nursery() as nursery:
        await nursery.start(a.run)
        assert a.port is not None
        with trio.fail_after(5):
            connections = []
            for _ in range(4):  # more than the address cap: authenticated ones do not count
                raw, nonce = await greeted(a.port)
                await raw.send_all(hello_frame(key, nonce, 2, 1, bytes(NONCE_BYTES)))
                welcome = await raw.receive_some(4 + 32)
                assert len(welcome) == 4 + 32, "not welcomed"
                connections.append(raw)
            for old in connections[:-1]:
                assert await closed_on_us(old)
        for raw in connections:
            await raw.aclose()
        nursery.cancel_scope.cancel()
