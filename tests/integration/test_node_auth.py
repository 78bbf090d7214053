"""Internal apis on a real 3-node cluster: only a connection that completed the node
handshake may call them, only as the node it proved to be, and a captured request or
handshake replayed on another connection is refused (and logged with the peer address)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import signal
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from cluster_checks import agreed_state, raft_leader, views, wait_for
from node_process import NodeProcess

from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.cluster.node_handshake import KEY_PURPOSE, NodeAuthClient
from rillet.broker.cluster.node_secret import GENERATED_SECRET_FILE
from rillet.broker.config import NodeConfig
from rillet.client import BlockingAdmin, NewTopic
from rillet.client.connection import BrokerConnection
from rillet.client.errors import ClusterAuthorizationFailedError
from rillet.launcher.local_cluster import SECRET_FILE, LocalCluster, plan_cluster
from rillet.raft.peer_mac import NONCE_BYTES
from rillet.wire.acl_messages import CreateAclsRequest
from rillet.wire.acls import AclBinding, Operation, PatternType, Permission, ResourceType
from rillet.wire.cluster_messages import (
    BrokerHeartbeatRequest,
    BrokerRegistrationRequest,
    MetadataFetchRequest,
    NodeAuthProveRequest,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import FetchPartition, FetchRequest, FetchResponse

pytestmark = pytest.mark.integration
TOPIC, LITERAL, ALLOW = ResourceType.TOPIC, PatternType.LITERAL, Permission.ALLOW


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(plan_cluster(tmp_path, 3, "broker_heartbeat_interval_ms = 300\n")) as c:
        c.start()
        yield c


def _auth(cluster: LocalCluster) -> ClusterAuth:
    secret = (Path(cluster.plan.base_dir) / SECRET_FILE).read_text().strip()
    return ClusterAuth(cluster.plan.cluster_id, secret)


def _local_address(conn: BrokerConnection) -> str:
    host, port = conn._stream.socket.getsockname()[:2]  # type: ignore[union-attr]
    return f"{host}:{port}"


def test_captured_internal_requests_and_handshakes_replayed_elsewhere_are_refused(
    cluster: LocalCluster,
) -> None:
    with BlockingAdmin(cluster.bootstrap) as admin:  # the brokers' own handshakes work
        admin.create_topics([NewTopic("t", 1, replication_factor=3)])
    before = wait_for("agreement", lambda: agreed_state(cluster, [1, 2, 3]))
    auth = _auth(cluster)
    cid = cluster.plan.cluster_id
    # What a capture of broker 1's traffic yields: its requests carry the old fixed token.
    captured = [
        BrokerRegistrationRequest(cid, auth.token, 1, "forged", "127.0.0.9", 1),
        BrokerHeartbeatRequest(cid, auth.token, 1, 1, 10**9, True),
        MetadataFetchRequest(cid, auth.token, 0),
    ]
    fetch = FetchRequest(
        100, 1, 1024, [FetchPartition("t", 0, 0, 1024)], 1, replica_auth=auth.token
    )
    answers: list[Any] = []
    refused_addresses: list[tuple[int, str]] = []

    async def replay() -> None:
        async with trio.open_nursery() as nursery:
            for n in cluster.plan.nodes:
                conn = BrokerConnection("127.0.0.1", n.port)
                await conn.connect(nursery, 5)
                refused_addresses.append((n.node_id, _local_address(conn)))
                for request in [*captured, fetch]:
                    answers.append(await conn.request(request, 5))
                conn.close()

    trio.run(replay)
    # A fetch is refused per partition (its top-level code is for fetch sessions only).
    codes = [a.error_code for a in answers if not isinstance(a, FetchResponse)]
    codes += [p.error_code for a in answers if isinstance(a, FetchResponse) for p in a.partitions]
    assert codes and set(codes) == {ErrorCode.AUTHENTICATION_FAILED}
    assert all(not getattr(a, "entries", None) for a in answers)
    after = agreed_state(cluster, [1, 2, 3])
    assert after is not None and after.state_sha256 == before.state_sha256
    for node_id, address in refused_addresses:  # a WARNING naming the peer, on every node
        log_text = cluster.log_path(node_id).read_text(errors="replace")
        assert "WARNING" in log_text and f"refused internal request from {address}" in log_text


def test_a_handshake_replayed_on_another_connection_fails_and_a_node_acts_only_as_itself(
    cluster: LocalCluster,
) -> None:
    auth = _auth(cluster)
    cid = cluster.plan.cluster_id
    target = cluster.plan.nodes[0]
    results: dict[str, Any] = {}

    async def scenario() -> None:
        async with trio.open_nursery() as nursery:
            # A legitimate handshake as node 1, observed on the wire.
            first = BrokerConnection("127.0.0.1", target.port)
            await first.connect(nursery, 5)
            client = NodeAuthClient(auth.handshake_key, cid, 1, secrets.token_bytes(NONCE_BYTES))
            prove: NodeAuthProveRequest = client.prove(await first.request(client.begin(), 5))
            client.finish(await first.request(prove, 5))
            # Replayed on a fresh connection: after its own challenge, and without one.
            second = BrokerConnection("127.0.0.1", target.port)
            await second.connect(nursery, 5)
            results["replay_address"] = _local_address(second)
            await second.request(client.begin(), 5)
            results["replayed"] = await second.request(prove, 5)
            results["unchallenged"] = await second.request(prove, 5)
            results["after_replay"] = await second.request(
                BrokerHeartbeatRequest(cid, auth.token, 1, 1, 10**9, True), 5
            )
            # A real node (2) may act only as itself on its connection.
            third = BrokerConnection("127.0.0.1", target.port)
            await third.connect(nursery, 5)
            await auth.authenticate(third, 2, 5)
            results["as_other"] = await third.request(
                BrokerHeartbeatRequest(cid, auth.token, 1, 1, 10**9, True), 5
            )
            results["metadata"] = await third.request(MetadataFetchRequest(cid, auth.token, 0), 5)
            for conn in (first, second, third):
                conn.close()

    trio.run(scenario)
    assert results["replayed"].error_code == ErrorCode.AUTHENTICATION_FAILED
    assert results["unchallenged"].error_code == ErrorCode.AUTHENTICATION_FAILED
    assert results["after_replay"].error_code == ErrorCode.AUTHENTICATION_FAILED
    assert results["as_other"].error_code == ErrorCode.AUTHORIZATION_FAILED
    assert results["metadata"].error_code in (ErrorCode.NONE, ErrorCode.NOT_CONTROLLER)
    log_text = cluster.log_path(target.node_id).read_text(errors="replace")
    assert f"node handshake from {results['replay_address']} refused" in log_text


def test_forged_heartbeats_and_fetches_do_not_keep_a_frozen_broker_alive(
    cluster: LocalCluster,
) -> None:
    """The attack of issue 18: a SIGSTOPped broker kept unfenced and in the ISR by replayed
    heartbeats and replica fetches, so acks=all writes were acknowledged without it."""
    auth = _auth(cluster)
    cid = cluster.plan.cluster_id
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics([NewTopic("frozen", 3, replication_factor=3)])
    wait_for("agreement", lambda: agreed_state(cluster, [1, 2, 3]))
    controller = wait_for("a controller", lambda: raft_leader(cluster))
    victim = next(i for i in (1, 2, 3) if i != controller)
    others = [i for i in (1, 2, 3) if i != victim]
    status = views(cluster, [controller])[controller]
    epoch = next(b.broker_epoch for b in status.brokers if b.broker_id == victim)

    def victim_gone() -> bool | None:
        vs = views(cluster, others)
        fenced = bool(vs) and all(
            any(b.broker_id == victim and b.fenced for b in v.brokers) for v in vs.values()
        )
        if not fenced:
            return None
        with BlockingAdmin(cluster.plan.node(controller).bootstrap) as admin:
            (topic,) = admin.describe_topics(["frozen"])
        return True if all(victim not in p.isr for p in topic.partitions) else None

    forged = [
        BrokerHeartbeatRequest(cid, auth.token, victim, epoch, 10**9, True),
        FetchRequest(
            100,
            1,
            1024,
            [FetchPartition("frozen", p, 10**6, 1024) for p in range(3)],
            victim,
            replica_auth=auth.token,
        ),
    ]
    refused: list[int] = []

    async def forge_while_frozen() -> None:
        async with trio.open_nursery() as nursery:
            conns = []
            for n in cluster.plan.nodes:
                if n.node_id == victim:
                    continue
                conn = BrokerConnection("127.0.0.1", n.port)
                await conn.connect(nursery, 5)
                conns.append(conn)
            deadline = trio.current_time() + 30
            while trio.current_time() < deadline:
                for conn in conns:
                    for request in forged:
                        answer = await conn.request(request, 5)
                        if isinstance(answer, FetchResponse):  # refused per partition
                            codes = [p.error_code for p in answer.partitions]
                        else:
                            codes = [answer.error_code]
                        refused.extend(c for c in codes if c is not None)
                if await trio.to_thread.run_sync(victim_gone):
                    break
                await trio.sleep(0.2)  # a forger's pace, like the broker's heartbeats
            for conn in conns:
                conn.close()

    cluster.signal(victim, signal.SIGSTOP)
    try:
        trio.run(forge_while_frozen)
        assert victim_gone(), "the frozen broker stayed unfenced or in the ISR"
    finally:
        cluster.signal(victim, signal.SIGCONT)
    assert refused and set(refused) == {ErrorCode.AUTHENTICATION_FAILED}


def test_a_node_without_a_configured_secret_refuses_a_handshake_anybody_could_compute(
    node_factory: Callable[..., NodeProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One voter, no secret_file, the authorizer on: the key an empty secret gives (public:
    the cluster id it is bound to is no secret) must not make anyone a node; and a peer
    that does prove the node's secret gets the internal apis, not the client apis."""
    monkeypatch.delenv("RILLET_CLUSTER_SECRET", raising=False)
    node = node_factory("[authorizer]\nenabled = true\n").start()
    cid = NodeConfig().cluster_id
    public_key = hmac.new(b"", KEY_PURPOSE, hashlib.sha256).digest()
    kept = node.data_dir / GENERATED_SECRET_FILE  # the secret it made for itself instead
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    answers: list[Any] = []
    grant_all = CreateAclsRequest(
        [AclBinding(TOPIC, "*", LITERAL, "User:ANONYMOUS", "*", Operation.ALL, ALLOW)]
    )

    async def pose_as_a_node() -> None:
        async with trio.open_nursery() as nursery:
            conn = BrokerConnection("127.0.0.1", node.port)
            await conn.connect(nursery, 5)
            try:
                client = NodeAuthClient(public_key, cid, 7, secrets.token_bytes(NONCE_BYTES))
                begun = await conn.request(client.begin(), 5)
                answers.append(begun)
                answers.append(await conn.request(client.prove(begun), 5))
                answers.append(await conn.request(MetadataFetchRequest(cid, b"", 0), 5))
            finally:
                conn.close()
            real = ClusterAuth(cid, kept.read_text().strip())
            conn = BrokerConnection("127.0.0.1", node.port)
            await conn.connect(nursery, 5)
            try:
                await real.authenticate(conn, 7, 5)
                answers.append(await conn.request(MetadataFetchRequest(cid, real.token, 0), 5))
                try:
                    answers.append(await conn.request(grant_all, 5))
                except ClusterAuthorizationFailedError as exc:
                    answers.append(exc)
            finally:
                conn.close()

    trio.run(pose_as_a_node)
    begun, proved, fetched, node_fetch, granted = answers
    assert begun.error_code == ErrorCode.NONE  # a challenge, then the proof is refused
    assert proved.error_code == ErrorCode.AUTHENTICATION_FAILED
    assert fetched.error_code == ErrorCode.AUTHENTICATION_FAILED and not fetched.entries
    assert node_fetch.error_code == ErrorCode.NONE  # with the real secret: a node
    assert isinstance(granted, ClusterAuthorizationFailedError)
    assert "User:ANONYMOUS may not ALTER cluster" in str(granted)
