"""Connections: pipelining by correlation id, typed failures, bounded waits."""

from __future__ import annotations

import socket
from functools import partial

import pytest
import trio
from client_fakes import FakeCluster

from rillet.client.connection import BrokerConnection
from rillet.client.errors import (
    ClientClosedError,
    ClientTimeoutError,
    ConnectionFailedError,
    UnknownApiError,
)
from rillet.wire.group_messages import ListGroupsRequest
from rillet.wire.messages import (
    ApiVersionsRequest,
    FetchPartition,
    FetchRequest,
    MetadataRequest,
    MetadataResponse,
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def slow_fetch(wait_ms: int) -> FetchRequest:
    """A long poll on an empty partition: the fake answers after ``wait_ms``."""
    return FetchRequest(wait_ms, 1, 1 << 20, [FetchPartition("t", 0, 0, 1 << 20)])


async def connect(
    cluster: FakeCluster, nursery: trio.Nursery, max_in_flight: int = 100
) -> BrokerConnection:
    conn = BrokerConnection("127.0.0.1", cluster.ports[0], max_in_flight=max_in_flight)
    await conn.connect(nursery, 5)
    return conn


async def test_responses_are_matched_by_correlation_id_out_of_order(
    cluster: FakeCluster, nursery: trio.Nursery
) -> None:
    cluster.create_topic("t", 1)
    conn = await connect(cluster, nursery)
    order: list[str] = []

    async def fetch() -> None:
        await conn.request(slow_fetch(300), 5)
        order.append("fetch")

    async def metadata(i: int) -> None:
        response = await conn.request(MetadataRequest(["t"]), 5)
        assert isinstance(response, MetadataResponse) and response.topics[0].name == "t"
        order.append(f"md{i}")

    async with trio.open_nursery() as inner:
        inner.start_soon(fetch)
        await trio.testing.wait_all_tasks_blocked()
        for i in range(20):
            inner.start_soon(metadata, i)
    assert order[-1] == "fetch" and len(order) == 21  # the slow one came back last
    assert cluster.accepted[0] == 1  # all on one connection


async def test_in_flight_requests_are_bounded(cluster: FakeCluster, nursery: trio.Nursery) -> None:
    cluster.create_topic("t", 1)
    conn = await connect(cluster, nursery, max_in_flight=2)
    async with trio.open_nursery() as inner:
        for _ in range(6):
            inner.start_soon(conn.request, slow_fetch(30), 5)
    assert cluster.max_outstanding == 2


async def test_a_top_level_error_raises_its_typed_error(
    cluster: FakeCluster, nursery: trio.Nursery
) -> None:
    conn = await connect(cluster, nursery)
    with pytest.raises(UnknownApiError):  # the fake node knows no groups
        await conn.request(ListGroupsRequest(), 5)
    await conn.request(MetadataRequest([]), 5)  # the connection carries on


async def test_a_timeout_leaves_the_connection_usable(
    cluster: FakeCluster, nursery: trio.Nursery
) -> None:
    cluster.create_topic("t", 1)
    conn = await connect(cluster, nursery)
    with pytest.raises(ClientTimeoutError):
        await conn.request(slow_fetch(2000), 0.05)
    assert not conn.closed and conn.in_flight == 0
    await conn.request(MetadataRequest([]), 5)


async def test_refused_and_broken_connections_fail_typed(nursery: trio.Nursery) -> None:
    with pytest.raises(ConnectionFailedError):
        await BrokerConnection("127.0.0.1", free_port()).connect(nursery, 5)

    async def close_after_reading(stream: trio.SocketStream) -> None:
        await stream.receive_some(65536)
        await stream.aclose()

    listeners = await nursery.start(
        partial(trio.serve_tcp, close_after_reading, 0, host="127.0.0.1")
    )
    conn = BrokerConnection("127.0.0.1", listeners[0].socket.getsockname()[1])
    await conn.connect(nursery, 5)
    with trio.fail_after(5), pytest.raises(ConnectionFailedError):
        await conn.request(MetadataRequest(), 5)
    assert conn.closed
    with pytest.raises(ConnectionFailedError):
        await conn.request(MetadataRequest(), 5)  # fails at once, does not hang


async def test_closing_fails_pending_requests(cluster: FakeCluster, nursery: trio.Nursery) -> None:
    cluster.create_topic("t", 1)
    conn = await connect(cluster, nursery)
    failures: list[BaseException] = []

    async def pending() -> None:
        try:
            await conn.request(slow_fetch(5000), 10)
        except ClientClosedError as exc:
            failures.append(exc)

    with trio.fail_after(5):
        async with trio.open_nursery() as inner:
            inner.start_soon(pending)
            await trio.testing.wait_all_tasks_blocked()
            await conn.aclose()
    assert len(failures) == 1 and conn.closed


async def test_both_ends_of_a_connection_disable_nagle() -> None:
    """TCP_NODELAY on the client's socket and on the socket a node's listener accepts (the
    node listens the same way, trio.open_tcp_listeners): a small request or response is
    never held back waiting for the peer's delayed ACK (a 40 ms stall on Linux)."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    accepted: list[trio.SocketStream] = []
    async with trio.open_nursery() as nursery:
        conn = BrokerConnection("127.0.0.1", port)
        await conn.connect(nursery, timeout_s=10)
        with trio.fail_after(10):
            accepted.append(await listeners[0].accept())
        client_sock = conn._stream.socket if conn._stream is not None else None
        assert client_sock is not None
        for sock in (client_sock, accepted[0].socket):
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        conn.close()
        await accepted[0].aclose()
        await listeners[0].aclose()


async def test_a_small_request_on_an_idle_connection_leaves_without_a_task_switch() -> None:
    """Written at once by ``submit`` (no hand-over to the writer task: one event-loop pass
    less per request); later frames still follow in submit order."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        conn = BrokerConnection("127.0.0.1", port)
        await conn.connect(nursery, timeout_s=10)
        with trio.fail_after(10):
            server = await listeners[0].accept()
        conn.submit(MetadataRequest(None))
        conn.submit(ApiVersionsRequest())
        # No checkpoint since submit: the writer task has not run, yet the bytes are there.
        raw = socket.socket(fileno=server.socket.fileno())
        try:
            raw.setblocking(False)
            first = raw.recv(1 << 16)
        finally:
            raw.detach()
        size = int.from_bytes(first[:4], "big")  # a frame: 4-byte length, then the body
        assert len(first) > 4 + size + 4  # the second frame follows the first, whole
        assert int.from_bytes(first[4 + size : 8 + size], "big") == len(first) - 8 - size
        conn.close()
        await server.aclose()
        await listeners[0].aclose()
