"""One client connection (broker/network/connection.py) over loopback TCP, with the real dispatcher
and handlers on real replicas, under trio's MockClock: pipelined requests are answered in
order, an acks=all answer waits for the high watermark, and the idle deadline closes a
silent connection after virtual minutes that take no real time.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio
import trio.testing
from broker_context import Middle, middle

from rillet.broker.cluster.node_handshake import NodeAuthClient
from rillet.broker.dispatcher import Dispatcher
from rillet.broker.handlers.replica_fetch import read_for_follower
from rillet.broker.network.connection import Connection
from rillet.broker.network.read_shares import RequestBytesBudget
from rillet.broker.network.request_budget import ReadPolicy
from rillet.raft.peer_mac import NONCE_BYTES
from rillet.wire.batch import build_batch
from rillet.wire.cluster_messages import NodeAuthBeginResponse, NodeAuthProveResponse
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FrameDecoder
from rillet.wire.messages import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    FetchPartition,
    ProducePartitionData,
    ProduceRequest,
    ProduceResponse,
)
from rillet.wire.protocol import decode_response, encode_request, response_type_for


@asynccontextmanager
async def served(
    m: Middle, policy: ReadPolicy | None = None, **options: Any
) -> AsyncIterator[trio.SocketStream]:
    """A client stream to a :class:`Connection` served in the background (``options``:
    the connection's keyword arguments)."""
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listener.socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        client = await trio.open_tcp_stream("127.0.0.1", port)
        server = await listener.accept()
        await listener.aclose()
        conn = Connection(server, Dispatcher(m.ctx), 1 << 20, 8, 65536, policy, **options)
        nursery.start_soon(conn.serve)
        try:
            yield client
        finally:
            await client.aclose()
            nursery.cancel_scope.cancel()


async def send(client: trio.SocketStream, correlation_id: int, request: Any) -> None:
    parts = encode_request(correlation_id, request, "test")
    await client.send_all(b"".join(bytes(p) for p in parts))  # type: ignore[arg-type]


async def receive(client: trio.SocketStream, decoder: FrameDecoder, response_type: type) -> Any:
    while (frame := decoder.next_frame()) is None:
        data = await client.receive_some(65536)
        assert data, "the connection closed"
        decoder.feed(data)
    return decode_response(frame, response_type)


def produce_request(acks: int, now_ms: int) -> ProduceRequest:
    records = build_batch([(now_ms, None, b"v", None)])
    return ProduceRequest(acks, 30_000, [ProducePartitionData("t", 0, records)])


async def test_pipelined_requests_are_answered_in_order_and_acks_all_waits(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    m.host("t", 0)
    decoder = FrameDecoder()
    async with served(m) as client:
        produce = produce_request(-1, m.clock.now_ms())
        await send(client, 1, produce)
        await send(client, 2, ApiVersionsRequest())
        await trio.testing.wait_all_tasks_blocked()
        # ApiVersions is answered at once, but behind the produce waiting for its replicas.
        assert decoder.next_frame() is None
        with trio.move_on_after(0.5) as waited:
            await receive(client, decoder, ProduceResponse)
        assert waited.cancelled_caught
        p = FetchPartition("t", 0, 1, 1 << 20, 1, 1)
        read_for_follower(m.ctx, p, 2, 1 << 20, first=True)  # the follower has offset 0
        first = await receive(client, decoder, response_type_for(produce))
        second = await receive(client, decoder, ApiVersionsResponse)
    assert first.partitions[0].error_code == ErrorCode.NONE
    assert isinstance(second, ApiVersionsResponse)


async def test_a_silent_connection_is_closed_at_its_idle_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    policy = ReadPolicy(RequestBytesBudget(1 << 20), 600.0, math.inf, math.inf)
    async with served(m, policy) as client:
        started = trio.current_time()
        with trio.fail_after(3600):
            assert await client.receive_some(1024) == b""  # closed by the broker
        assert trio.current_time() - started >= 600


async def test_a_reserved_connection_is_promoted_once_it_proves_to_be_a_node(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Admitted on a node-reserve slot, it may run the node handshake only; once it has, the
    limiter is told (the slot no longer counts) and the connection serves like any other."""
    m = middle(tmp_path)
    auth = m.ctx.metadata.auth
    promoted: list[bool] = []
    decoder = FrameDecoder()
    policy = ReadPolicy(RequestBytesBudget(1 << 30), math.inf, math.inf, 10.0)
    options = {"reserved": True, "on_node_authenticated": lambda: promoted.append(True)}
    async with served(m, policy, **options) as client:
        node = NodeAuthClient(auth.handshake_key, auth.cluster_id, 2, b"c" * NONCE_BYTES)
        await send(client, 1, node.begin())
        begun = await receive(client, decoder, NodeAuthBeginResponse)
        await send(client, 2, node.prove(begun))
        node.finish(await receive(client, decoder, NodeAuthProveResponse))
        assert promoted == [True]
        await trio.sleep(60)  # past the reserve's handshake deadline: it no longer applies
        await send(client, 3, ApiVersionsRequest())
        assert (await receive(client, decoder, ApiVersionsResponse)).apis
