"""ClusterClient: bootstrap, one connection per node, metadata refresh, failover."""

from __future__ import annotations

import socket
from dataclasses import replace

import pytest
import trio
from client_fakes import FakeCluster

from rillet.client import Producer
from rillet.client.cluster import ClusterClient, parse_bootstrap
from rillet.client.errors import (
    ConnectionFailedError,
    LeaderNotAvailableError,
    UnknownTopicOrPartitionError,
)
from rillet.client.types import TopicPartition
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import MetadataRequest, MetadataResponse, ProduceRequest, TopicMetadata


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_parse_bootstrap() -> None:
    assert parse_bootstrap("a:1, b:2,") == [("a", 1), ("b", 2)]
    assert parse_bootstrap("[::1]:9092") == [("::1", 9092)]
    for bad in ("", "host", "host:x", ":9", "h:0", "h:70000"):
        with pytest.raises(ValueError):
            parse_bootstrap(bad)


async def test_metadata_and_one_connection_per_node(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 3, leader=1)
    async with ClusterClient(cluster.bootstrap) as client:
        await client.refresh_metadata(["t"])
        tp = TopicPartition("t", 2)
        assert client.leader_for(tp) == 1 and client.partition_count("t") == 3
        async with trio.open_nursery() as nursery:
            for _ in range(10):
                nursery.start_soon(client.connection_for_leader, tp)
        conn = await client.connection_for_leader(tp)
        assert conn.port == cluster.ports[1]
        assert cluster.accepted[1] == 1  # ten concurrent callers, one connection


async def test_concurrent_refreshes_are_coalesced(cluster: FakeCluster) -> None:
    cluster.create_topic("t", 1)
    async with ClusterClient(cluster.bootstrap) as client:
        async with trio.open_nursery() as nursery:
            for _ in range(5):
                nursery.start_soon(client.refresh_metadata, ["t"])
        assert 1 <= len(cluster.of_type(MetadataRequest)) < 5


async def test_bootstrap_moves_past_a_dead_address(cluster: FakeCluster) -> None:
    async with ClusterClient(f"127.0.0.1:{free_port()},{cluster.bootstrap}") as client:
        response = await client.refresh_metadata([])
        assert sorted(b.node_id for b in response.brokers) == [0, 1]
    with pytest.raises(ConnectionFailedError, match="no node reachable"):
        async with ClusterClient(f"127.0.0.1:{free_port()}") as client:
            await client.refresh_metadata()


async def test_waiting_for_a_topic_is_bounded(cluster: FakeCluster) -> None:
    async with ClusterClient(cluster.bootstrap) as client:
        with trio.fail_after(5), pytest.raises(UnknownTopicOrPartitionError):
            await client.wait_for_topic("missing", 0.2)
        cluster.create_topic("late", 2)
        assert await client.wait_for_topic("late", 1) == 2


async def test_asking_for_creation_fails_at_once_where_nodes_do_not_create(
    cluster: FakeCluster,
) -> None:
    """The fake node, like a node with auto.create.topics.enable off (or an older one),
    answers UNKNOWN_TOPIC_OR_PARTITION to a request that asked for the topic's creation:
    the client says so at once instead of polling until its timeout."""
    async with ClusterClient(cluster.bootstrap) as client:
        with trio.fail_after(1), pytest.raises(UnknownTopicOrPartitionError) as refused:
            await client.wait_for_topic("missing", 30, auto_create=True)
    assert "'missing'" in str(refused.value)
    assert "auto.create.topics.enable" in str(refused.value)
    assert [r.allow_auto_topic_creation for _, r in cluster.of_type(MetadataRequest)] == [True]


async def test_a_topic_being_created_is_waited_for(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LEADER_NOT_AVAILABLE while the node creates the topic: the client asks again."""
    handle = cluster._handle
    asked: list[MetadataRequest] = []

    async def creating(node: int, req: object) -> object:
        if isinstance(req, MetadataRequest) and req.topics == ["new"]:
            asked.append(req)
            if len(asked) == 3:
                cluster.create_topic("new", 2)
            elif len(asked) < 3:
                being = TopicMetadata("new", ErrorCode.LEADER_NOT_AVAILABLE, [])
                response = await handle(node, req)
                assert isinstance(response, MetadataResponse)
                return replace(response, topics=[being])
        return await handle(node, req)

    monkeypatch.setattr(cluster, "_handle", creating)
    async with ClusterClient(cluster.bootstrap) as client:
        with trio.fail_after(5):
            assert await client.wait_for_topic("new", 5, auto_create=True) == 2
    assert all(r.allow_auto_topic_creation for r in asked)


async def test_a_node_behind_what_the_client_saw_is_not_believed(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 16: after "created" a client must not hear "unknown topic" from a node that has
    not applied the creation (cut off from the quorum, it cannot catch up): the client asks
    another node and keeps the fresher answer."""
    cluster.create_topic("new", 1)
    handle = cluster._handle

    async def lagging_node_0(node: int, req: object) -> object:
        response = await handle(node, req)
        if isinstance(req, MetadataRequest) and isinstance(response, MetadataResponse):
            if node == 0:  # still before the topic's creation
                return replace(response, topics=[], metadata_offset=5)
            return replace(response, metadata_offset=10)
        return response

    monkeypatch.setattr(cluster, "_handle", lagging_node_0)
    async with ClusterClient(cluster.bootstrap) as client:  # bootstrap: node 0
        client.saw_metadata_offset(10)  # e.g. from the CreateTopics answer
        response = await client.refresh_metadata(["new"])
        assert response.metadata_offset == 10 and client.partition_count("new") == 1
    asked = [n for n, r in cluster.requests if isinstance(r, MetadataRequest)]
    assert asked == [0, 1]
    assert {r.min_metadata_offset for _, r in cluster.of_type(MetadataRequest)} == {10}


async def test_a_node_that_has_not_caught_up_since_its_start_is_passed_over(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restarted node refuses Metadata (LEADER_NOT_AVAILABLE, top level) until it has
    applied what the quorum committed: the client asks another node at once, keeps its
    connection to the refusing one, and raises the refusal only when every node refuses."""
    cluster.create_topic("t", 6)
    handle = cluster._handle
    restarting = {0}

    async def node_0_restarting(node: int, req: object) -> object:
        if isinstance(req, MetadataRequest) and node in restarting:
            return ErrorCode.LEADER_NOT_AVAILABLE
        return await handle(node, req)

    monkeypatch.setattr(cluster, "_handle", node_0_restarting)
    both = ",".join(f"127.0.0.1:{cluster.ports[n]}" for n in (0, 1))
    async with ClusterClient(both) as client:  # node 0 first
        await client.refresh_metadata(["t"])
        assert client.partition_count("t") == 6
        assert [n for n, r in cluster.requests if isinstance(r, MetadataRequest)] == [0, 1]
        assert cluster.accepted[0] == 1
        restarting.add(1)
        with pytest.raises(LeaderNotAvailableError):
            await client.refresh_metadata(["t"])
        assert client.partition_count("t") == 6  # nothing believed from a refusal


async def test_a_metadata_refresh_does_not_queue_behind_a_leaders_produce_requests(
    cluster: FakeCluster,
) -> None:
    """A node answers a connection's requests in order. In a pause sweep, the leader checks'
    metadata refreshes went out on the producer's connection to a live leader and waited
    behind acks=all produce requests that were themselves waiting for the paused node to
    leave the ISR: the new leader was seen only seconds after the controller named it.
    Requests any node can answer now use control connections of their own."""
    cluster.create_topic("t", 1)
    async with Producer(cluster.bootstrap, linger_ms=0) as producer:
        await (await producer.send("t", b"a", partition=0))
        client = producer._cluster
        for key in [k for k in client._connections if not isinstance(k, int)]:
            client._connections.pop(key).close()  # only the leader's connection is left
        cluster.produce_hold = True  # the leader holds produce requests (acks=all waiting)
        held = await producer.send("t", b"b", partition=0)
        with trio.fail_after(5):
            await cluster.wait_for(ProduceRequest, 2)
        with trio.fail_after(1):
            await client.refresh_metadata(["t"])
        cluster.produce_hold = False
        cluster.hold.set()
        assert (await held).offset == 1


async def test_a_leader_check_leaves_a_node_that_does_not_answer_within_half_a_second(
    nursery: trio.Nursery,
) -> None:
    """The check's refresh can reach a node paused too but not yet seen stalled (its own
    requests were sent just before the pause). It used to wait 5 s there, and the checks
    run one at a time: the new leader was seen 5 s late. Now it moves on after 0.5 s."""
    fake = FakeCluster(num_nodes=2)
    await fake.start(nursery)
    fake.create_topic("t", 1, leader=0)
    async with ClusterClient(fake.bootstrap) as client:
        await client.refresh_metadata(["t"])
        await client.any_connection(avoid={0})  # node 1's control connection comes first
        for key in [k for k in client._connections if k[:1] == ("bootstrap",)]:
            client._connections.pop(key).close()
        fake.paused.add(1)
        started = trio.current_time()
        with trio.fail_after(3):
            await client._refresh_for_leader_check(frozenset({"t"}), set())
        assert trio.current_time() - started < 1.5
        fake.resume(1)
