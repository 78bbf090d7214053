"""HTTP connection slots: idle connections give way to new ones, busy ones never do.

The pure bookkeeping first, then the trio server over in-memory streams: 70 connections that
send nothing, then probes that must all be answered.
"""

from __future__ import annotations

import trio
import trio.testing

from rillet.broker.http.server import HttpServer, plain
from rillet.broker.http.slots import HttpSlots


def test_the_oldest_idle_connection_gives_way_when_all_slots_are_taken() -> None:
    slots = HttpSlots(max_connections=3, max_per_ip=3)
    first, second, third = (slots.admit(h).connection for h in ("a", "b", "c"))
    assert None not in (first, second, third)
    grant = slots.admit("d")
    assert grant.connection is not None and grant.evicted == (first,)
    assert slots.open_connections == 3 and slots.evictions == 1


def test_busy_connections_are_never_evicted_and_a_full_busy_table_refuses() -> None:
    slots = HttpSlots(max_connections=2, max_per_ip=2)
    busy = [slots.admit(h).connection for h in ("a", "b")]
    for c in busy:
        assert c is not None
        slots.started(c)
    assert slots.admit("c").connection is None and slots.refused == 1
    slots.release(busy[0])
    assert slots.admit("c").connection is not None


def test_an_address_at_its_cap_evicts_its_own_oldest_idle_connection() -> None:
    slots = HttpSlots(max_connections=10, max_per_ip=2)
    other = slots.admit("b").connection
    mine = [slots.admit("a").connection for _ in range(2)]
    grant = slots.admit("a")
    assert grant.evicted == (mine[0],)  # not the other address's older connection
    assert other is not None and slots.open_connections == 3
    slots.release(mine[0])  # the evicted handler releasing again changes nothing
    assert slots.open_connections == 3


def test_an_address_whose_connections_are_all_busy_is_refused() -> None:
    slots = HttpSlots(max_connections=10, max_per_ip=1)
    c = slots.admit("a").connection
    assert c is not None
    slots.started(c)
    assert slots.admit("a").connection is None
    assert slots.admit("b").connection is not None


async def test_probes_are_answered_while_70_idle_connections_are_open() -> None:
    server = HttpServer(lambda r: plain(200, "ok"), request_head_timeout_ms=60_000)
    idle = []
    async with trio.open_nursery() as nursery:
        for _ in range(70):
            client, served = trio.testing.memory_stream_pair()
            idle.append(client)
            nursery.start_soon(server.handle, served)
        await trio.testing.wait_all_tasks_blocked()
        for _ in range(20):
            client, served = trio.testing.memory_stream_pair()
            nursery.start_soon(server.handle, served)
            await client.send_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            out = b""
            with trio.fail_after(5):
                while chunk := await client.receive_some(65536):
                    out += chunk
            assert out.startswith(b"HTTP/1.1 200 ")
        assert server.open_connections <= 8  # one address: its own cap
        nursery.cancel_scope.cancel()
