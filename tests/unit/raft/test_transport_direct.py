"""The Raft transport's short paths, on real loopback sockets: a message sent while its
connection is idle is written by the caller at once; one the socket takes only in part is
finished by the send loop before anything later; messages can be handed to the driver by
the connection task that read them. Order and authentication hold throughout."""

from __future__ import annotations

import trio
import trio.testing
from test_transport import pair


async def test_a_message_sent_on_an_idle_connection_is_written_at_once() -> None:
    a, b = pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(a.run)
        await nursery.start(b.run)
        with trio.fail_after(10):
            a.send(2, b"first")  # queued: no connection yet
            assert await b.receive() == (1, b"first")
            await trio.testing.wait_all_tasks_blocked()  # a's send loop is idle now
            for i in range(50):
                assert a.send(2, f"m{i}".encode())
            assert a.direct_writes >= 1
            got = [await b.receive() for _ in range(50)]
        assert got == [(1, f"m{i}".encode()) for i in range(50)]
        nursery.cancel_scope.cancel()


async def test_what_the_socket_did_not_take_goes_first_and_order_holds() -> None:
    """Messages far larger than a socket buffer: the first direct write is partial, its rest
    and every later message go through the send loop, in order, each authenticated."""
    a, b = pair()
    big = [bytes([i]) * (8 << 20) for i in range(4)]
    async with trio.open_nursery() as nursery:
        await nursery.start(a.run)
        await nursery.start(b.run)
        with trio.fail_after(30):
            a.send(2, b"hello")
            assert await b.receive() == (1, b"hello")
            await trio.testing.wait_all_tasks_blocked()
            direct_before = a.direct_writes
            for payload in big:
                assert a.send(2, payload)
            a.send(2, b"after")
            assert a.direct_writes == direct_before  # the first was written only in part
            got = [await b.receive() for _ in range(5)]
        assert got == [(1, p) for p in big] + [(1, b"after")]
        nursery.cancel_scope.cancel()


async def test_messages_can_be_handed_over_by_the_reading_task() -> None:
    a, b = pair()
    delivered: list[tuple[int, bytes]] = []
    arrived = trio.Event()

    def handler(peer: int, payload: bytes, more: bool) -> None:
        delivered.append((peer, payload))
        if len(delivered) == 200:
            arrived.set()

    b.deliver_to(handler)
    async with trio.open_nursery() as nursery:
        await nursery.start(a.run)
        await nursery.start(b.run)
        for i in range(200):  # a burst: many frames read together, handed over in slices
            a.send(2, f"m{i}".encode())
        with trio.fail_after(10):
            await arrived.wait()
        assert delivered == [(1, f"m{i}".encode()) for i in range(200)]
        nursery.cancel_scope.cancel()
