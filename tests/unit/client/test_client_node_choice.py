"""ClusterClient and a node that accepts connections but answers nothing (as a SIGSTOPped
node does: the kernel completes TCP connects into its listen backlog).

The client used to try its candidates one after another: such a node first in the bootstrap
list held every client up for the request timeout (30 s), or the connect timeout (10 s) with
TLS. Now connects are raced and control requests that are safe to repeat are hedged.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import trio
from client_fakes import FakeCluster

from rillet.client.cluster import ClusterClient
from rillet.client.connection import BrokerConnection
from rillet.client.errors import ConnectionFailedError
from rillet.client.node_choice import control_candidates, is_repeatable
from rillet.wire.messages import (
    CreateTopicsRequest,
    InitProducerIdRequest,
    MetadataRequest,
)

# Well above the 250 ms connection attempt delay and 500 ms hedge delay, far below the
# 10 s connect and 30 s request timeouts the old behaviour waited out.
BOUND_S = 2.0


@contextmanager
def silent_node() -> Iterator[str]:
    """A listening socket nobody accepts on: connects complete, nothing is answered."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"127.0.0.1:{listener.getsockname()[1]}"


async def test_bootstrap_goes_past_a_node_that_accepts_but_never_answers(
    cluster: FakeCluster,
) -> None:
    with silent_node() as silent:
        async with ClusterClient(f"{silent},{cluster.bootstrap}") as client:
            start = trio.current_time()
            with trio.fail_after(BOUND_S):
                response = await client.refresh_metadata([])
            took_s = trio.current_time() - start
    assert sorted(b.node_id for b in response.brokers) == [0, 1]
    assert took_s < 1.0


async def test_a_request_not_safe_to_repeat_goes_once_to_a_node_that_answered(
    cluster: FakeCluster,
) -> None:
    """Only the connect phase (up to a first answer) is raced for a producer id."""
    with silent_node() as silent:
        async with ClusterClient(f"{silent},{cluster.bootstrap}") as client:
            with trio.fail_after(BOUND_S):
                answer = await client.request_any(InitProducerIdRequest())
    assert answer.producer_id == 1
    assert len(cluster.of_type(InitProducerIdRequest)) == 1


async def test_a_metadata_request_is_hedged_to_a_second_node(cluster: FakeCluster) -> None:
    async with ClusterClient(cluster.bootstrap) as client:
        await client.refresh_metadata([])  # on node 0's connection, which stays open
        cluster.paused.add(0)
        with trio.fail_after(BOUND_S):
            await client.refresh_metadata([])
        assert [n for n, _ in cluster.of_type(MetadataRequest)] == [0, 0, 1]
        # Node 0 did not answer first: its connection is closed, so the next control
        # request goes to node 1 and does not wait on node 0.
        with trio.fail_after(BOUND_S):
            await client.request_any(InitProducerIdRequest())
        assert [n for n, _ in cluster.of_type(InitProducerIdRequest)] == [1]
        cluster.resume(0)


async def test_a_request_not_safe_to_repeat_is_not_hedged(cluster: FakeCluster) -> None:
    async with ClusterClient(cluster.bootstrap) as client:
        await client.refresh_metadata([])
        cluster.paused.add(0)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.request_any, InitProducerIdRequest(), 1.2)
            with trio.move_on_after(0.9):  # beyond the hedge delay
                await cluster.wait_for(InitProducerIdRequest, 2)
            assert [n for n, _ in cluster.of_type(InitProducerIdRequest)] == [0]
            # After its timeout (1.2 s) it goes to the next node, as before.
            with trio.fail_after(BOUND_S):
                await cluster.wait_for(InitProducerIdRequest, 2)
        assert [n for n, _ in cluster.of_type(InitProducerIdRequest)] == [0, 1]
        cluster.resume(0)


async def test_a_probed_connection_to_a_silent_node_fails_and_leaves_nothing_open() -> None:
    with silent_node() as silent, trio.fail_after(BOUND_S):
        host, port = silent.split(":")
        conn = BrokerConnection(host, int(port))
        async with trio.open_nursery() as nursery:  # ends only if no task is left in it
            with pytest.raises(ConnectionFailedError, match=r"no answer from .* within 0\.2s"):
                await conn.connect(nursery, 0.2, probe=True)
        assert conn.closed


def test_which_requests_may_be_sent_twice() -> None:
    assert is_repeatable(MetadataRequest([]))
    assert not is_repeatable(InitProducerIdRequest())
    assert not is_repeatable(CreateTopicsRequest([], 1000))


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("socket_connection_setup_timeout_ms", 0),
        ("connection_attempt_delay_ms", 0),
        ("request_hedge_delay_ms", 20_000),
    ],
)
def test_delays_out_of_range_are_refused_naming_the_setting(setting: str, value: int) -> None:
    with pytest.raises(ValueError, match=setting):
        ClusterClient("127.0.0.1:9092", **{setting: value})


def test_candidates_open_connections_first_one_per_address() -> None:
    open_ones = [(("bootstrap", "h", 2), "h", 2), (3, "h", 3)]  # 3: a leader connection
    brokers = {1: ("h", 1), 2: ("h", 2), 3: ("h", 3)}
    got = control_candidates(open_ones, brokers, [("h", 1), ("h", 9)], lambda k, a: a == ("h", 3))
    assert got == [
        (("bootstrap", "h", 2), "h", 2),
        (("control", 1), "h", 1),
        (("bootstrap", "h", 9), "h", 9),
    ]
