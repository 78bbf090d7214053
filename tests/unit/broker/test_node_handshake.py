"""The node handshake state machines and the internal-api gate, without sockets."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rillet.broker.cluster.node_handshake import (
    NodeAuthClient,
    NodeAuthFailed,
    NodeAuthServer,
    handshake_key,
)
from rillet.broker.security.internal_api_gate import check_internal, refusal_response
from rillet.raft.peer_mac import NONCE_BYTES
from rillet.wire.cluster_messages import (
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    MetadataFetchRequest,
    NodeAuthBeginRequest,
    NodeAuthProveRequest,
    NodeAuthProveResponse,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import FetchPartition, FetchRequest, MetadataRequest

CLUSTER = "c-1"
SECRET = "a-cluster-secret-of-16+"
RNG = random.Random(18)


def nonce() -> bytes:
    return RNG.randbytes(NONCE_BYTES)


def run(
    server: NodeAuthServer, client: NodeAuthClient, server_nonce: bytes | None = None
) -> NodeAuthProveRequest:
    begun = server.begin(client.begin(), server_nonce or nonce())
    prove = client.prove(begun)
    client.finish(server.prove(prove))
    return prove


def test_a_node_with_the_secret_authenticates_mutually_and_is_bound_to_its_id() -> None:
    key = handshake_key(SECRET)
    server = NodeAuthServer(key, CLUSTER)
    run(server, NodeAuthClient(key, CLUSTER, 2, nonce()))
    assert server.node_id == 2 and server.refusal is None


def test_a_wrong_secret_is_refused_by_the_server() -> None:
    server = NodeAuthServer(handshake_key(SECRET), CLUSTER)
    client = NodeAuthClient(handshake_key("another-secret-entirely"), CLUSTER, 2, nonce())
    with pytest.raises(NodeAuthFailed):
        run(server, client)
    assert server.node_id is None and server.refusal is not None


def test_a_server_without_the_secret_is_refused_by_the_node() -> None:
    client = NodeAuthClient(handshake_key(SECRET), CLUSTER, 2, nonce())
    impostor = NodeAuthServer(handshake_key("another-secret-entirely"), CLUSTER)
    client.prove(impostor.begin(client.begin(), nonce()))
    # An impostor that cannot check the proof answers "accepted" with a made-up proof.
    with pytest.raises(NodeAuthFailed, match="server did not prove"):
        client.finish(NodeAuthProveResponse(ErrorCode.NONE, RNG.randbytes(32)))


def test_a_captured_proof_replayed_on_another_connection_is_refused() -> None:
    key = handshake_key(SECRET)
    captured = run(NodeAuthServer(key, CLUSTER), NodeAuthClient(key, CLUSTER, 1, nonce()))
    fresh = NodeAuthServer(key, CLUSTER)
    # Without asking for a challenge first:
    answer = fresh.prove(captured)
    assert answer.error_code == ErrorCode.AUTHENTICATION_FAILED and fresh.node_id is None
    assert fresh.refusal is not None and fresh.refusal.replay_suspected
    # After a challenge (a new nonce), the old proof does not match it:
    fresh.begin(NodeAuthClient(key, CLUSTER, 1, nonce()).begin(), nonce())
    answer = fresh.prove(captured)
    assert answer.error_code == ErrorCode.AUTHENTICATION_FAILED and fresh.node_id is None
    assert fresh.refusal is not None and "replayed" in fresh.refusal.reason


def test_a_proof_is_bound_to_the_node_id_and_the_cluster() -> None:
    key = handshake_key(SECRET)
    server = NodeAuthServer(key, CLUSTER)
    honest = NodeAuthClient(key, CLUSTER, 1, nonce())
    server.begin(NodeAuthClient(key, CLUSTER, 3, nonce()).begin(), nonce())  # claims node 3
    begun = server.begin(honest.begin(), nonce())  # a second begin replaces the first
    assert server.prove(honest.prove(begun)).error_code == ErrorCode.NONE
    assert server.node_id == 1
    other_cluster = NodeAuthServer(key, "c-2")
    assert (
        other_cluster.begin(NodeAuthClient(key, CLUSTER, 1, nonce()).begin(), nonce()).error_code
        == ErrorCode.AUTHENTICATION_FAILED
    )


def test_an_authenticated_connection_cannot_switch_identity() -> None:
    key = handshake_key(SECRET)
    server = NodeAuthServer(key, CLUSTER)
    run(server, NodeAuthClient(key, CLUSTER, 1, nonce()))
    again = server.begin(NodeAuthClient(key, CLUSTER, 2, nonce()).begin(), nonce())
    assert again.error_code == ErrorCode.AUTHENTICATION_FAILED and server.node_id == 1


def test_one_challenge_admits_one_proof() -> None:
    key = handshake_key(SECRET)
    server = NodeAuthServer(key, CLUSTER)
    client = NodeAuthClient(key, CLUSTER, 1, nonce())
    begun = server.begin(client.begin(), nonce())
    wrong = NodeAuthProveRequest(nonce(), b"\x00" * 32)
    assert server.prove(wrong).error_code == ErrorCode.AUTHENTICATION_FAILED
    # The right proof for the consumed challenge no longer counts: no guessing per nonce.
    assert server.prove(client.prove(begun)).error_code == ErrorCode.AUTHENTICATION_FAILED
    assert server.node_id is None


def _fetch(replica_id: int) -> FetchRequest:
    return FetchRequest(100, 1, 1024, [FetchPartition("t", 0, 0, 1024)], replica_id=replica_id)


def test_the_gate_serves_internal_apis_only_on_node_connections_for_their_own_id() -> None:
    heartbeat = BrokerHeartbeatRequest(CLUSTER, b"", 1, 7, 0, True)
    registration = BrokerRegistrationRequest(CLUSTER, b"", 1, "inc", "127.0.0.1", 1)
    metadata_fetch = MetadataFetchRequest(CLUSTER, b"", 0)
    for request in (heartbeat, registration, metadata_fetch, _fetch(1)):
        refused = check_internal(request, None)
        assert refused is not None and refused.error == ErrorCode.AUTHENTICATION_FAILED
        assert check_internal(request, 1) is None
    for request in (heartbeat, registration, _fetch(1)):
        refused = check_internal(request, 2)
        assert refused is not None and refused.error == ErrorCode.AUTHORIZATION_FAILED
    assert check_internal(metadata_fetch, 2) is None
    # Client apis need no node: a consumer fetch, metadata.
    assert check_internal(_fetch(-1), None) is None
    assert check_internal(MetadataRequest(None), None) is None


def test_a_refusal_answers_in_the_requests_own_response_type() -> None:
    heartbeat = BrokerHeartbeatRequest(CLUSTER, b"", 1, 7, 0, True)
    refused = check_internal(heartbeat, None)
    assert refused is not None
    answer = refusal_response(heartbeat, refused)
    assert isinstance(answer, BrokerHeartbeatResponse)
    assert answer.error_code == ErrorCode.AUTHENTICATION_FAILED and answer.fenced
    fetch_refused = check_internal(_fetch(3), 1)
    assert fetch_refused is not None
    fetch_answer = refusal_response(_fetch(3), fetch_refused)
    assert [p.error_code for p in fetch_answer.partitions] == [ErrorCode.AUTHORIZATION_FAILED]


@given(
    cluster=st.text(max_size=20),
    node_id=st.integers(min_value=-(2**80), max_value=2**80),
    client_nonce=st.binary(max_size=40),
    proof=st.binary(max_size=40),
    begin_first=st.booleans(),
)
def test_the_server_answers_any_handshake_input_without_crashing(
    cluster: str, node_id: int, client_nonce: bytes, proof: bytes, begin_first: bool
) -> None:
    server = NodeAuthServer(handshake_key(SECRET), CLUSTER)
    if begin_first:
        server.begin(NodeAuthBeginRequest(cluster, node_id), nonce())
    answer = server.prove(NodeAuthProveRequest(client_nonce, proof))
    assert answer.error_code == ErrorCode.AUTHENTICATION_FAILED and server.node_id is None
