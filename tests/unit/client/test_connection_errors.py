"""Connections fail fast and typed: refused, closed by the peer, misuse of blocking clients."""

from __future__ import annotations

import socket

import pytest
import trio

from rillet.client import BlockingAdmin
from rillet.client.cluster import ClusterClient, parse_bootstrap
from rillet.client.errors import (
    ConnectionFailedError,
    RilletError,
    TopicAlreadyExistsError,
    error_for,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import MetadataRequest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_parse_bootstrap() -> None:
    assert parse_bootstrap("a:1, b:2") == [("a", 1), ("b", 2)]
    for bad in ("", "host", "host:x", ":9"):
        with pytest.raises(ValueError):
            parse_bootstrap(bad)


def test_error_mapping() -> None:
    err = error_for(ErrorCode.TOPIC_ALREADY_EXISTS, "t")
    assert isinstance(err, TopicAlreadyExistsError) and not err.retriable
    generic = error_for(ErrorCode.DUPLICATE_SEQUENCE)
    assert generic.code is ErrorCode.DUPLICATE_SEQUENCE
    assert error_for(ErrorCode.NOT_LEADER_OR_FOLLOWER).retriable


async def test_refused_connection_is_typed() -> None:
    cluster = ClusterClient(f"127.0.0.1:{free_port()}", None, 2000)
    async with trio.open_nursery() as nursery:
        cluster.start(nursery)
        with pytest.raises(ConnectionFailedError):
            await cluster.request_any(MetadataRequest())
        await cluster.close()


async def test_peer_closing_fails_pending_requests() -> None:
    async def close_after_reading(stream: trio.SocketStream) -> None:
        await stream.receive_some(65536)
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(trio.serve_tcp, close_after_reading, 0)
        port = listeners[0].socket.getsockname()[1]
        cluster = ClusterClient(f"127.0.0.1:{port}", None, 2000)
        cluster.start(nursery)
        with trio.fail_after(5), pytest.raises(ConnectionFailedError):
            await cluster.request_any(MetadataRequest())
        await cluster.close()
        nursery.cancel_scope.cancel()


async def test_blocking_clients_refuse_to_run_inside_trio() -> None:
    with pytest.raises(RilletError, match="inside trio"):
        BlockingAdmin("127.0.0.1:1")
