"""The link proxies forward bytes, hold them while a direction is cut, and release them on
heal — checked over real loopback sockets against a small echo server."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from rillet.chaos.link_proxy import LinkProxies, LinkProxyError

HOLD_CHECK_S = 0.3  # how long a held byte must stay held (a negative check, kept short)
DEADLINE_S = 5.0


@pytest.fixture
def echo_server() -> Iterator[tuple[int, list[bytes]]]:
    """An echo server on loopback; the list collects what it received."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(DEADLINE_S)
    received: list[bytes] = []

    def serve() -> None:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        with conn:
            while data := conn.recv(1024):
                received.append(data)
                conn.sendall(data)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], received
    server.close()
    thread.join(DEADLINE_S)


def _recv(sock: socket.socket, timeout_s: float) -> bytes | None:
    sock.settimeout(timeout_s)
    try:
        return sock.recv(1024)
    except TimeoutError:
        return None


def test_forwards_then_holds_a_cut_direction_then_releases_it(
    echo_server: tuple[int, list[bytes]],
) -> None:
    port, received = echo_server
    proxies = LinkProxies()
    proxy_port = proxies.route(1, 2, "raft", port)
    with proxies, socket.create_connection(("127.0.0.1", proxy_port), DEADLINE_S) as conn:
        conn.sendall(b"a")
        assert _recv(conn, DEADLINE_S) == b"a"
        proxies.cut([(1, 2)])
        conn.sendall(b"b")
        assert _recv(conn, HOLD_CHECK_S) is None
        assert received == [b"a"]
        proxies.heal()
        assert _recv(conn, DEADLINE_S) == b"b"


def test_one_way_cut_lets_requests_in_and_holds_the_answers(
    echo_server: tuple[int, list[bytes]],
) -> None:
    port, received = echo_server
    proxies = LinkProxies()
    proxy_port = proxies.route(1, 2, "listener", port)
    with proxies, socket.create_connection(("127.0.0.1", proxy_port), DEADLINE_S) as conn:
        proxies.cut([(2, 1)])
        conn.sendall(b"x")
        assert _recv(conn, HOLD_CHECK_S) is None
        assert received == [b"x"]  # node 2 heard node 1; node 1 did not hear node 2
        proxies.heal([(2, 1)])
        assert _recv(conn, DEADLINE_S) == b"x"
        assert proxies.blocked == frozenset()


def test_a_dead_target_closes_the_dialers_connection() -> None:
    free = socket.create_server(("127.0.0.1", 0))
    dead_port = free.getsockname()[1]
    free.close()
    proxies = LinkProxies()
    proxy_port = proxies.route(3, 1, "raft", dead_port)
    with proxies, socket.create_connection(("127.0.0.1", proxy_port), DEADLINE_S) as conn:
        assert _recv(conn, DEADLINE_S) == b""


def test_links_are_planned_before_start() -> None:
    proxies = LinkProxies()
    proxies.route(1, 2, "raft", 1)
    with proxies:
        with pytest.raises(LinkProxyError):
            proxies.route(2, 1, "raft", 1)
        assert proxies.link_port(1, 2, "raft") == proxies.links[0].proxy_port
