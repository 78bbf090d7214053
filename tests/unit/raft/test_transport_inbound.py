"""What the Raft port does with peers that have not authenticated, on real loopback sockets:
connections over the per-address cap are closed before anything is read; an oversized
hello, a forged one or none within the deadline closes the connection, with a rate-limited
WARNING; a peer that authenticates again replaces its previous connection."""

from __future__ import annotations

import logging
import struct
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

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


@asynccontextmanager
async def listening() -> AsyncIterator[tuple[RaftTransport, int]]:
    """Voter 1's transport with :data:`LIMITS`, running (peer 2 is never up), and its port."""
    peers = {i: PeerAddress("127.0.0.1", free_port()) for i in (1, 2)}
    a = RaftTransport(1, peers, SECRET, peers[1], limits=LIMITS)
    async with trio.open_nursery() as nursery:
        port = await nursery.start(a.run)
        yield a, port
        nursery.cancel_scope.cancel()


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
    async with listening() as (_transport, port):
        with trio.fail_after(5):
            held = [await greeted(port) for _ in range(2)]
            for _ in range(3):
                extra = await trio.open_tcp_stream("127.0.0.1", port)
                assert await closed_on_us(extra)  # no greeting: nothing was done for it
                await extra.aclose()
        for raw, _ in held:
            await raw.aclose()


def half_a_header(nonce: bytes) -> bytes:
    return b"\0\0"  # and then nothing


def a_60_mib_hello(nonce: bytes) -> bytes:
    return struct.pack(">I", 60 * 1024 * 1024) + b"\0" * 65536


def a_forged_hello(nonce: bytes) -> bytes:
    return hello_frame(derive_key("another-secret-entirely"), nonce, 2, 1, bytes(NONCE_BYTES))


@pytest.mark.parametrize(
    ("send", "reason", "closed_after_s", "rejected"),
    [
        (half_a_header, "no hello within the handshake deadline", 0.3, 0),
        (a_60_mib_hello, "declared a hello of 62914560 bytes", 0.0, 3),
        (a_forged_hello, "hello failed authentication", 0.0, 3),
    ],
)
async def test_a_bad_hello_closes_the_connection_with_one_warning_per_address(
    caplog: pytest.LogCaptureFixture,
    send: Callable[[bytes], bytes],
    reason: str,
    closed_after_s: float,
    rejected: int,
) -> None:
    caplog.set_level(logging.WARNING, logger="rillet.raft")
    async with listening() as (a, port):
        with trio.fail_after(5):
            for _ in range(3):
                started = trio.current_time()  # before the connect: the deadline starts later
                raw, nonce = await greeted(port)
                await raw.send_all(send(nonce))
                assert await closed_on_us(raw)
                await raw.aclose()
                assert closed_after_s <= trio.current_time() - started < 3
    lines = [r for r in caplog.records if "closed a connection from 127.0.0.1" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    assert reason in lines[0].getMessage()
    assert a.rejected == rejected


async def test_a_peer_that_authenticates_again_replaces_its_previous_connection() -> None:
    key = derive_key(SECRET)
    async with listening() as (_transport, port):
        with trio.fail_after(5):
            connections = []
            for _ in range(4):  # more than the address cap: authenticated ones do not count
                raw, nonce = await greeted(port)
                await raw.send_all(hello_frame(key, nonce, 2, 1, bytes(NONCE_BYTES)))
                welcome = await raw.receive_some(4 + 32)
                assert len(welcome) == 4 + 32, "not welcomed"
                connections.append(raw)
            for old in connections[:-1]:
                assert await closed_on_us(old)
        for raw in connections:
            await raw.aclose()
