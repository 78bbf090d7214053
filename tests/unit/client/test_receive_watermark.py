"""A connection's reader wakes once most of a large frame has arrived (SO_RCVLOWAT), and
every byte still arrives (real sockets on 127.0.0.1)."""

from __future__ import annotations

import socket

import trio
import trio.testing

from rillet.client.receive_watermark import (
    RECEIVE_LOW_WATER_MAX_BYTES,
    RECEIVE_LOW_WATER_MIN_BYTES,
    ReceiveWatermark,
)


async def _pair() -> tuple[trio.SocketStream, trio.SocketStream, trio.SocketListener]:
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listener.socket.getsockname()[1]
    client = await trio.open_tcp_stream("127.0.0.1", port)
    server = await listener.accept()
    assert isinstance(server, trio.SocketStream)
    return client, server, listener


def _low_water(stream: trio.SocketStream) -> int:
    return int(stream.socket.getsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT))


async def test_the_mark_follows_the_missing_bytes_of_a_large_frame_only() -> None:
    client, server, listener = await _pair()
    try:
        mark = ReceiveWatermark(client)
        mark.expect(RECEIVE_LOW_WATER_MIN_BYTES - 1)  # a small frame: wake at once
        assert _low_water(client) == 1
        mark.expect(300_000)
        assert _low_water(client) == 300_000
        mark.expect(50 * 1024 * 1024)
        assert _low_water(client) == RECEIVE_LOW_WATER_MAX_BYTES
        mark.expect(0)
        assert _low_water(client) == 1
    finally:
        for s in (client, server, listener):
            await s.aclose()


async def test_every_byte_of_a_frame_sent_in_pieces_arrives() -> None:
    client, server, listener = await _pair()
    total = 3 * RECEIVE_LOW_WATER_MAX_BYTES + 12_345
    try:
        mark = ReceiveWatermark(client)

        async def send_in_pieces() -> None:
            piece = bytes(100_000)
            sent = 0
            while sent < total:
                n = min(len(piece), total - sent)
                await server.send_all(piece[:n])
                sent += n
                await trio.sleep(0.001)

        received = 0
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(send_in_pieces)
                while received < total:
                    mark.expect(total - received)
                    received += len(await client.receive_some(1 << 20))
        assert received == total
    finally:
        for s in (client, server, listener):
            await s.aclose()


async def test_a_stream_that_is_not_a_plain_socket_is_left_alone() -> None:
    a, _ = trio.testing.memory_stream_pair()
    ReceiveWatermark(a).expect(10 * RECEIVE_LOW_WATER_MAX_BYTES)  # nothing to set, no error
