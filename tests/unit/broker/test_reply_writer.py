"""The reply writer: a ready reply with nothing ahead of it is written by the reader at
once; everything else goes through the writer task, and replies always leave in order, also
when the socket takes only part of a direct write. Real socket pairs, no mocks."""

from __future__ import annotations

import random
import socket
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import trio

from rillet.broker.network.reply_writer import ReplyWriter
from rillet.wire.frame import BlobPart


@dataclass
class _Reply:
    body: bytes
    deferred: trio.Event | None = None
    charged: list[int] = field(default_factory=list)
    waiting: Coroutine[Any, Any, None] | None = None


async def _materialize(reply: _Reply) -> list[BlobPart]:
    if reply.deferred is not None:
        await reply.deferred.wait()
    return [reply.body]


def _ready(reply: _Reply) -> list[BlobPart] | None:
    return None if reply.deferred is not None else [reply.body]


def _charge(reply: _Reply, parts: list[BlobPart]) -> None:
    reply.charged.append(sum(len(p) for p in parts if not hasattr(p, "fd")))


def _discard(reply: _Reply) -> None:
    if reply.waiting is not None:
        reply.waiting.close()


def _pair(send_buffer_bytes: int | None = None) -> tuple[trio.SocketStream, socket.socket]:
    ours, theirs = socket.socketpair()
    if send_buffer_bytes is not None:
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer_bytes)
        theirs.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, send_buffer_bytes)
    theirs.setblocking(False)
    return trio.SocketStream(trio.socket.from_stdlib_socket(ours)), theirs


async def _read_exactly(peer: socket.socket, n: int) -> bytes:
    data = bytearray()
    with trio.fail_after(10):
        while len(data) < n:
            await trio.lowlevel.wait_readable(peer)
            data += peer.recv(n - len(data))
    return bytes(data)


def _writer(stream: trio.SocketStream) -> ReplyWriter[_Reply]:
    return ReplyWriter(stream, 8, _materialize, _ready, _charge, _discard)


@asynccontextmanager
async def _running(
    send_buffer_bytes: int | None = None,
) -> AsyncIterator[tuple[ReplyWriter[_Reply], socket.socket]]:
    """A writer with its task running and idle, and the peer's end of the socket."""
    stream, peer = _pair(send_buffer_bytes)
    writer = _writer(stream)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.run)
            await trio.testing.wait_all_tasks_blocked()
            yield writer, peer
            writer.finish()
    finally:
        peer.close()


async def test_a_ready_reply_on_an_idle_connection_is_written_by_the_reader() -> None:
    async with _running() as (writer, peer):
        first = _Reply(b"one")
        await writer.put(first)
        # Written by put itself, not handed to the writer task.
        assert writer.direct_writes == 1 and peer.recv(10) == b"one"
        assert first.charged == [3]


async def test_a_ready_reply_behind_a_deferred_one_waits_its_turn() -> None:
    async with _running() as (writer, peer):
        deferred = trio.Event()
        await writer.put(_Reply(b"slow;", deferred))
        await writer.put(_Reply(b"fast;"))
        await trio.testing.wait_all_tasks_blocked()
        assert writer.direct_writes == 0
        deferred.set()
        assert await _read_exactly(peer, 10) == b"slow;fast;"
        await trio.testing.wait_all_tasks_blocked()
        await writer.put(_Reply(b"later"))  # idle again: direct
        assert await _read_exactly(peer, 5) == b"later"
        assert writer.direct_writes == 1


async def test_what_a_full_socket_leaves_unsent_goes_out_before_later_replies() -> None:
    bodies = [bytes([65 + i]) * 30_000 for i in range(5)]  # more than the buffers hold
    async with _running(send_buffer_bytes=4096) as (writer, peer):
        for body in bodies:
            await writer.put(_Reply(body))
        assert writer.direct_writes == 0  # the first was cut short: the rest queue behind it
        received = await _read_exactly(peer, sum(len(b) for b in bodies))
        assert received == b"".join(bodies)


async def test_large_replies_go_through_the_writer_task() -> None:
    big = b"x" * 200_000
    async with _running() as (writer, peer):
        await writer.put(_Reply(big))
        assert await _read_exactly(peer, len(big)) == big
        assert writer.direct_writes == 0


async def test_replies_never_sent_are_released() -> None:
    stream, peer = _pair()
    writer = _writer(stream)

    async def never() -> None:
        await trio.sleep_forever()

    coroutine = never()
    await writer.put(_Reply(b"", trio.Event(), waiting=coroutine))  # no writer task running
    writer.finish()
    writer.discard_pending()
    assert coroutine.cr_frame is None  # closed
    peer.close()
    await stream.aclose()


async def test_a_reply_queued_while_the_writer_sends_keeps_later_ready_ones_behind_it() -> None:
    """A deferred reply put while the writer task is sending is taken up after that send;
    a ready reply put while it waits must not be written directly ahead of it (the client
    matches answers to requests by order)."""
    big = b"B" * 30_000  # more than the socket buffers, less than a coalesced send
    async with _running(send_buffer_bytes=4096) as (writer, peer):
        await writer.put(_Reply(big))
        await trio.testing.wait_all_tasks_blocked()  # the writer task is inside its send
        deferred = trio.Event()
        await writer.put(_Reply(b"slow;", deferred))
        received = await _read_exactly(peer, len(big))  # the send completes
        await trio.testing.wait_all_tasks_blocked()  # the writer waits for the slow reply
        await writer.put(_Reply(b"fast;"))
        deferred.set()
        received = await _read_exactly(peer, 10)
        assert received == b"slow;fast;"


async def _pause(rng: random.Random, most: int) -> None:
    for _ in range(rng.randint(0, most)):
        await trio.lowlevel.checkpoint()


@pytest.mark.parametrize("seed", range(40))
async def test_replies_leave_in_order_under_any_interleaving(seed: int) -> None:
    """Seeded mixes of small, mid-size and deferred replies, put while the peer reads in
    random bites and deferred ones complete in random order at random moments: the bytes
    arrive in put order."""
    rng = random.Random(seed)
    replies: list[_Reply] = []
    for i in range(60):
        size = rng.choice([5, 5, 5, 3000, 30_000, 100_000])
        body = f"<{i}>".encode().ljust(size, b".")
        replies.append(_Reply(body, trio.Event() if rng.random() < 0.3 else None))
    expected = b"".join(r.body for r in replies)
    deferred = [r.deferred for r in replies if r.deferred is not None]
    rng.shuffle(deferred)
    async with _running(send_buffer_bytes=4096) as (writer, peer):
        received = bytearray()

        async def read_all() -> None:
            while len(received) < len(expected):
                await trio.lowlevel.wait_readable(peer)
                received.extend(peer.recv(rng.choice([512, 4096, 65536])))
                await _pause(rng, 5)

        async def complete_all() -> None:
            for event in deferred:
                await _pause(rng, 30)
                event.set()

        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(read_all)
                nursery.start_soon(complete_all)
                for reply in replies:
                    await writer.put(reply)
                    await _pause(rng, 5)
        assert bytes(received) == expected
