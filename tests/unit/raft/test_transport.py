"""The Raft transport on real loopback sockets: messages flow between voters that share the
secret; a peer without it reaches nothing; a tampered frame ends its connection; queues are
bounded; a restarted peer is reconnected; a peer whose port refuses connections is reported
down, and only then."""

from __future__ import annotations

import errno
import socket
import time
from collections.abc import Awaitable, Callable

import pytest
import trio
import trio.testing

from rillet.raft.transport import (
    MAGIC,
    NONCE_BYTES,
    PeerAddress,
    RaftTransport,
    connection_refused,
)

SECRET = "a-cluster-secret-of-some-length"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def pair(secret_b: str = SECRET) -> tuple[RaftTransport, RaftTransport]:
    ports = {1: free_port(), 2: free_port()}
    peers = {i: PeerAddress("127.0.0.1", p) for i, p in ports.items()}
    a = RaftTransport(1, peers, SECRET, peers[1])
    b = RaftTransport(2, peers, secret_b, peers[2])
    return a, b


async def test_messages_flow_both_ways_in_order() -> None:
    a, b = pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(a.run)
        await nursery.start(b.run)
        for i in range(100):
            assert a.send(2, f"m{i}".encode())
        b.send(1, b"back")
        with trio.fail_after(10):
            got = [await b.receive() for _ in range(100)]
            assert got == [(1, f"m{i}".encode()) for i in range(100)]
            assert await a.receive() == (2, b"back")
        nursery.cancel_scope.cancel()


async def test_a_peer_without_the_secret_delivers_nothing() -> None:
    a, b = pair(secret_b="another-secret-entirely")
    async with trio.open_nursery() as nursery:
        await nursery.start(a.run)
        await nursery.start(b.run)
        b.send(1, b"forged")
        with trio.move_on_after(1):
            await a.receive()
            raise AssertionError("a message from a peer without the secret arrived")
        assert a.rejected >= 1
        nursery.cancel_scope.cancel()


async def test_garbage_and_tampered_frames_end_the_connection_only() -> None:
    a, b = pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(a.run)
        await nursery.start(b.run)
        assert a.port is not None
        raw = await trio.open_tcp_stream("127.0.0.1", a.port)
        greeting = await raw.receive_some(len(MAGIC) + NONCE_BYTES)
        assert greeting.startswith(MAGIC)
        await raw.send_all(b"\x00\x00\x00\x05" + b"\x00" * 32 + b"junk!")
        with trio.fail_after(5):
            assert await raw.receive_some(100) == b""  # closed on us
        b.send(1, b"still works")
        with trio.fail_after(10):
            assert await a.receive() == (2, b"still works")
        nursery.cancel_scope.cancel()


async def test_a_full_queue_drops_instead_of_blocking() -> None:
    ports = {1: free_port(), 2: free_port()}
    peers = {i: PeerAddress("127.0.0.1", p) for i, p in ports.items()}
    a = RaftTransport(1, peers, SECRET, peers[1], queue_messages=4)  # peer 2 is down
    results = [a.send(2, b"x") for _ in range(10)]
    assert results.count(True) == 4 and a.dropped == 6


async def test_a_restarted_peer_is_reconnected() -> None:
    a, b = pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(a.run)
        async with trio.open_nursery() as first:
            await first.start(b.run)
            a.send(2, b"one")
            with trio.fail_after(10):
                assert await b.receive() == (1, b"one")
            first.cancel_scope.cancel()
        assert a.port is not None and b.port is not None
        peers = {1: PeerAddress("127.0.0.1", a.port), 2: PeerAddress("127.0.0.1", b.port)}
        b2 = RaftTransport(2, peers, SECRET, peers[2])  # the same voter, restarted
        await nursery.start(b2.run)
        with trio.fail_after(10):
            while True:  # messages sent while it was down may be lost: Raft resends
                a.send(2, b"two")
                with trio.move_on_after(0.2):
                    assert await b2.receive() == (1, b"two")
                    break
        nursery.cancel_scope.cancel()


async def test_a_peer_that_dies_is_reported_down_without_anything_to_send() -> None:
    a, b = pair()
    async with trio.open_nursery() as nursery:
        async with trio.open_nursery() as first:
            await first.start(b.run)  # up before a first connects: no report at startup
            await nursery.start(a.run)
            a.send(2, b"one")
            with trio.fail_after(10):
                assert await b.receive() == (1, b"one")
            first.cancel_scope.cancel()  # its sockets close and its port refuses
        # a has nothing queued for 2 (a follower of a dead leader has nothing to answer):
        # it notices the close itself, reconnects at once, and is refused.
        with trio.fail_after(5):
            assert await a.peer_down() == 2
        nursery.cancel_scope.cancel()


async def _within_real_seconds(seconds: float, wait: Callable[[], Awaitable[object]]) -> None:
    """Run ``wait`` while the (mock) clock stands still; fail after ``seconds`` of real time."""
    async with trio.open_nursery() as nursery:

        async def guard() -> None:
            await trio.to_thread.run_sync(time.sleep, seconds, abandon_on_cancel=True)
            raise AssertionError(f"nothing within {seconds} s while the clock stood still")

        nursery.start_soon(guard)
        await wait()
        nursery.cancel_scope.cancel()


async def test_a_peer_killed_soon_after_each_restart_is_reported_down_at_once(
    mock_clock: trio.testing.MockClock,
) -> None:
    """No backoff before the refused connect that proves the death, however often the peer
    was restarted (a threshold of one second once made it grow to a second)."""
    a, b = pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(a.run)
        for _ in range(4):
            async with trio.open_nursery() as life:
                await life.start(b.run)
                assert a.port is not None and b.port is not None
                peers = {1: PeerAddress("127.0.0.1", a.port), 2: PeerAddress("127.0.0.1", b.port)}
                mock_clock.jump(1.0)  # a's reconnect backoff after the last refusal

                async def delivered(b: RaftTransport = b) -> None:
                    a.send(2, b"ping")
                    assert await b.receive() == (1, b"ping")

                await _within_real_seconds(10, delivered)
                mock_clock.jump(0.2)  # lived 200 ms: not a flap
                life.cancel_scope.cancel()  # killed: its port refuses
            # Reported with the clock standing still: no sleep before the refused connect.
            await _within_real_seconds(10, a.peer_down)
            b = RaftTransport(2, peers, SECRET, peers[2])  # restarted on the same port
        nursery.cancel_scope.cancel()


async def test_a_restarted_peer_is_reached_as_soon_as_it_connects_to_us(
    mock_clock: trio.testing.MockClock,
) -> None:
    """A's reconnects to a peer that is down back off (the clock stands still here, so
    they would wait forever); the peer's own connection to a, once it is back, ends the
    wait at once."""
    a, b = pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(a.run)
        await _within_real_seconds(10, a.peer_down)  # refused: a now backs off
        await nursery.start(b.run)
        b.send(1, b"I am back")

        async def both_ways() -> None:
            assert await a.receive() == (2, b"I am back")
            a.send(2, b"welcome back")
            assert await b.receive() == (1, b"welcome back")

        await _within_real_seconds(10, both_ways)
        nursery.cancel_scope.cancel()


async def test_a_live_peer_that_fails_the_handshake_is_not_reported_down() -> None:
    async def hang_up(stream: trio.SocketStream) -> None:
        await stream.aclose()  # accepts, then closes: alive, but no proof of death

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    peers = {1: PeerAddress("127.0.0.1", free_port()), 2: PeerAddress("127.0.0.1", port)}
    a = RaftTransport(1, peers, SECRET, peers[1])
    async with trio.open_nursery() as nursery:
        await nursery.start(trio.serve_listeners, hang_up, listeners)
        await nursery.start(a.run)
        with trio.move_on_after(0.5):  # several reconnects (backoff 50, 100, 200 ms)
            await a.peer_down()
            raise AssertionError("a peer that accepted connections was reported down")
        nursery.cancel_scope.cancel()


async def test_only_a_refused_connect_counts_as_proof_that_a_peer_is_gone() -> None:
    with pytest.raises(OSError) as refused:
        await trio.open_tcp_stream("127.0.0.1", free_port())  # nothing listens there
    assert connection_refused(refused.value)
    assert connection_refused(ConnectionRefusedError(errno.ECONNREFUSED, "refused"))
    assert not connection_refused(TimeoutError(errno.ETIMEDOUT, "timed out"))
    assert not connection_refused(OSError(errno.EHOSTUNREACH, "no route to host"))
    assert not connection_refused(trio.TooSlowError())
    one_of_two = OSError("all attempts to connect failed")
    one_of_two.__cause__ = ExceptionGroup(
        "", [ConnectionRefusedError(errno.ECONNREFUSED, "refused"), TimeoutError()]
    )
    assert not connection_refused(one_of_two)  # another address may reach it
