"""The listener probe tells a refused connection from an accepted one (loopback sockets)."""

from __future__ import annotations

import socket

import trio

from rillet.metadata_quorum.listener_probe import listener_refuses


async def test_a_listening_port_is_not_refused_and_a_closed_one_is() -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    assert not await listener_refuses("127.0.0.1", port)
    for listener in listeners:
        await listener.aclose()
    assert await listener_refuses("127.0.0.1", port)


async def test_a_bound_socket_that_does_not_listen_refuses() -> None:
    with socket.socket() as sock:  # bound, never listening: the kernel refuses
        sock.bind(("127.0.0.1", 0))
        assert await listener_refuses("127.0.0.1", sock.getsockname()[1])
