"""Before a client has logged in, both listeners read little and decode less: a frame over
sasl.server.max.receive.size closes the connection before its bytes are read, and
strangers' unfinished frames leave the budget of everyone else alone. Real connection
objects with SASL on, over loopback TCP, in the test's own loop (its lag is measured)."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from broker_context import Middle, middle
from served_connection import LoopLagProbe, Served, blocking_twin, serving

from rillet.broker.config import NodeConfig
from rillet.broker.config.limits_config import LimitsConfig
from rillet.broker.dispatcher import Dispatcher
from rillet.broker.kafka.connection import kafka_front_end
from rillet.broker.network.connection import Connection
from rillet.broker.network.request_budget import ReadPolicy
from rillet.wire.frame import LENGTH
from rillet.wire.messages import ApiVersionsRequest, MetadataRequest
from rillet.wire.protocol import encode_request

MIB = 1 << 20


def kafka_metadata_v1(topics: int) -> bytes:
    """A Kafka Metadata v1 request naming ``topics`` empty topic names (2 bytes each)."""
    head = struct.pack(">hhih", 3, 1, 7, 4) + b"test"
    body = struct.pack(">i", topics) + b"\0\0" * topics
    return struct.pack(">i", len(head) + len(body)) + head + body


def native_request(request: Any) -> bytes:
    return b"".join(bytes(p) for p in encode_request(7, request, "test"))  # type: ignore[arg-type]


def kafka_api_versions() -> bytes:
    head = struct.pack(">hhih", 18, 0, 9, 4) + b"test"
    return struct.pack(">i", len(head)) + head


def kafka(m: Middle, policy: ReadPolicy) -> Callable[[trio.SocketStream], Served]:
    limits = m.ctx.config.limits
    front_end = kafka_front_end(m.ctx, limits.max_frame_bytes, policy)
    return lambda s: Connection(
        s, Dispatcher(m.ctx), limits.max_frame_bytes, 8, limits.receive_buffer_bytes, policy,
        sasl_mechanisms=("PLAIN",), front_end=front_end,
    )  # fmt: skip


def native(m: Middle, policy: ReadPolicy) -> Callable[[trio.SocketStream], Served]:
    limits = m.ctx.config.limits
    return lambda s: Connection(
        s, Dispatcher(m.ctx), limits.max_frame_bytes, 8, limits.receive_buffer_bytes, policy,
        sasl_mechanisms=("PLAIN",),
    )  # fmt: skip


LISTENERS = {
    # listener: (connection maker, a big request naming 4M topics / ~600k topics, ApiVersions)
    "kafka": (kafka, lambda: kafka_metadata_v1(4_000_000), kafka_api_versions),
    "native": (
        native,
        lambda: native_request(MetadataRequest([f"{i}" for i in range(600_000)])),
        lambda: native_request(ApiVersionsRequest()),
    ),
}


async def closed_by_node(client: trio.SocketStream) -> bool:
    """Whether the node closes the connection within 10 s (what it sent is dropped)."""
    with trio.move_on_after(10):
        while True:
            try:
                if not await client.receive_some(65536):
                    return True
            except trio.BrokenResourceError:
                return True
    return False


def send_in_thread(sock: socket.socket, parts: list[bytes]) -> threading.Thread:
    """Send ``parts`` from a worker thread (a stranger's upload costs the loop nothing),
    stopping when the node closes the connection or stops reading for a second."""

    def push() -> None:
        sock.settimeout(1.0)
        try:
            for part in parts:
                sock.sendall(part)
        except OSError:
            pass

    thread = threading.Thread(target=push, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("listener", sorted(LISTENERS))
async def test_a_huge_metadata_before_login_closes_without_stalling_the_loop(
    tmp_path: Path, listener: str
) -> None:
    make, big_request, _ = LISTENERS[listener]
    m = middle(tmp_path)
    frame = big_request()
    assert len(frame) > m.ctx.config.limits.sasl_server_max_receive_size
    probe = LoopLagProbe()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(probe.run)
        async with serving(make(m, ReadPolicy.for_limits(m.ctx.config.limits))) as connect:
            client = await connect()
            with blocking_twin(client) as twin:
                sender = send_in_thread(twin, [frame])
                assert await closed_by_node(client)
                await trio.to_thread.run_sync(sender.join)
        nursery.cancel_scope.cancel()
    assert probe.worst_s < 0.1, f"the loop stalled {probe.worst_s * 1000:.0f} ms"


@pytest.mark.parametrize("listener", sorted(LISTENERS))
async def test_four_unfinished_100mib_frames_before_login_leave_api_versions_fast(
    tmp_path: Path, listener: str
) -> None:
    make, _, api_versions = LISTENERS[listener]
    # The smallest node-wide budget the limits allow: 30 MiB from each stranger spend it.
    limits = LimitsConfig(queued_max_request_bytes=120 * MIB)
    m = middle(tmp_path, NodeConfig(node_id=1, data_dir=tmp_path, limits=limits))
    policy = ReadPolicy.for_limits(limits)
    async with serving(make(m, policy)) as connect:
        strangers = [await connect() for _ in range(4)]
        twins = [blocking_twin(s) for s in strangers]
        senders = [send_in_thread(t, [LENGTH.pack(100 * MIB), b"\0" * (30 * MIB)]) for t in twins]
        for sender in senders:
            await trio.to_thread.run_sync(sender.join)
        # The best of three tries: the machine running the test is shared (CI runners),
        # and one late wake-up of this process is not the node's doing.
        elapsed_s: list[float] = []
        for _ in range(3):
            started = time.monotonic()
            client = await connect()
            await client.send_all(api_versions())
            with trio.fail_after(5):
                assert await client.receive_some(65536), "closed instead of answered"
            elapsed_s.append(time.monotonic() - started)
        for twin in twins:
            twin.close()
    assert min(elapsed_s) < 0.1, f"connect + ApiVersions took {min(elapsed_s) * 1000:.0f} ms"
