"""The per-connection node handshake, sans I/O: who may call the internal apis.

A broker that wants to register, heartbeat, fetch metadata, change an ISR or fetch as a
follower first proves, on that very connection, that it holds the cluster secret:

1. it sends NodeAuthBegin (cluster id, its node id); the server answers a fresh random nonce;
2. it sends NodeAuthProve: its own fresh nonce and
   ``HMAC(key, "client", server nonce, client nonce, node id, cluster id)``;
3. the server checks it and answers
   ``HMAC(key, "server", server nonce, client nonce, node id, cluster id)``, which the node
   checks in turn (mutual: a node never trusts a server that does not hold the secret).

After that the connection is bound to that node id and the server accepts internal requests
on it only for that id. The proof depends on the server's nonce, fresh per connection, so a
proof captured from one connection is worthless on any other: a replay fails step 2.

The key is derived from the cluster secret with its own purpose label (a proof made here is
never valid in the Raft transport and vice versa). Both sides are plain state machines: they
take the peer's message (and the randomness as an argument) and return the message to send.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from rillet.broker.errors import BrokerError
from rillet.raft.peer_mac import NONCE_BYTES, derive_key, mac_parts, macs_equal
from rillet.wire.cluster_messages import (
    NodeAuthBeginRequest,
    NodeAuthBeginResponse,
    NodeAuthProveRequest,
    NodeAuthProveResponse,
)
from rillet.wire.error_codes import ErrorCode

KEY_PURPOSE = b"rillet node handshake v1"
_NODE_ID = struct.Struct(">q")
MAX_NODE_ID = 2**31 - 1


class NodeAuthFailed(BrokerError):
    """The other side of a node handshake did not prove the cluster secret."""


def handshake_key(secret: str) -> bytes:
    return derive_key(secret, KEY_PURPOSE)


def _proof(
    key: bytes, role: bytes, server_nonce: bytes, client_nonce: bytes, node_id: int, cluster: str
) -> bytes:
    return mac_parts(
        key, role, server_nonce, client_nonce, _NODE_ID.pack(node_id), cluster.encode()
    )


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a server refused a handshake step (the driver logs it with the peer address)."""

    reason: str
    replay_suspected: bool = False


class NodeAuthServer:
    """The server's side, one per connection. ``node_id`` is set once a node proved itself;
    it never changes afterwards (a connection cannot switch identities)."""

    def __init__(self, key: bytes, cluster_id: str) -> None:
        self._key = key
        self._cluster_id = cluster_id
        self._claimed: int | None = None
        self._server_nonce: bytes | None = None
        self.node_id: int | None = None
        self.refusal: Refusal | None = None  # the last refusal, for the driver's log line

    def begin(self, request: NodeAuthBeginRequest, server_nonce: bytes) -> NodeAuthBeginResponse:
        """Answer a fresh nonce (``server_nonce``: NONCE_BYTES of the driver's randomness)."""
        if self.node_id is not None:
            return self._refuse_begin("the connection is already authenticated")
        if request.cluster_id != self._cluster_id:
            return self._refuse_begin(
                f"cluster id {request.cluster_id!r} is not this cluster's ({self._cluster_id!r})",
            )
        if not 0 <= request.node_id <= MAX_NODE_ID:
            return self._refuse_begin(f"invalid node id {request.node_id}")
        if len(server_nonce) != NONCE_BYTES:
            raise ValueError(f"a server nonce has {NONCE_BYTES} bytes")
        self._claimed = request.node_id
        self._server_nonce = server_nonce
        self.refusal = None
        return NodeAuthBeginResponse(ErrorCode.NONE, server_nonce)

    def prove(self, request: NodeAuthProveRequest) -> NodeAuthProveResponse:
        """Check the node's proof against this connection's nonce; bind the connection."""
        claimed, nonce = self._claimed, self._server_nonce
        # One proof per nonce: a second attempt needs a new NodeAuthBegin.
        self._claimed = self._server_nonce = None
        if self.node_id is not None:
            return self._refuse_prove("the connection is already authenticated")
        if claimed is None or nonce is None:
            return self._refuse_prove(
                "a proof without a challenge on this connection (a replayed handshake?)",
                replay_suspected=True,
            )
        if len(request.client_nonce) != NONCE_BYTES:
            return self._refuse_prove("the client nonce has the wrong length")
        expected = _proof(
            self._key, b"client", nonce, request.client_nonce, claimed, self._cluster_id
        )
        if not macs_equal(request.proof, expected):
            return self._refuse_prove(
                f"node {claimed} did not prove the cluster secret on this connection "
                "(wrong secret, or a proof replayed from another connection)",
                replay_suspected=True,
            )
        self.node_id = claimed
        self.refusal = None
        server_proof = _proof(
            self._key, b"server", nonce, request.client_nonce, claimed, self._cluster_id
        )
        return NodeAuthProveResponse(ErrorCode.NONE, server_proof)

    def _refuse_begin(self, reason: str) -> NodeAuthBeginResponse:
        self.refusal = Refusal(reason)
        return NodeAuthBeginResponse(ErrorCode.AUTHENTICATION_FAILED, error_message=reason)

    def _refuse_prove(self, reason: str, replay_suspected: bool = False) -> NodeAuthProveResponse:
        self.refusal = Refusal(reason, replay_suspected)
        return NodeAuthProveResponse(ErrorCode.AUTHENTICATION_FAILED, error_message=reason)


class NodeAuthClient:
    """The node's side: ``begin`` → send; ``prove(answer)`` → send; ``finish(answer)``."""

    def __init__(self, key: bytes, cluster_id: str, node_id: int, client_nonce: bytes) -> None:
        if len(client_nonce) != NONCE_BYTES:
            raise ValueError(f"a client nonce has {NONCE_BYTES} bytes")
        self._key = key
        self._cluster_id = cluster_id
        self._node_id = node_id
        self._client_nonce = client_nonce
        self._server_nonce: bytes | None = None

    def begin(self) -> NodeAuthBeginRequest:
        return NodeAuthBeginRequest(self._cluster_id, self._node_id)

    def prove(self, answer: NodeAuthBeginResponse) -> NodeAuthProveRequest:
        if answer.error_code != ErrorCode.NONE:
            raise NodeAuthFailed(f"node handshake refused: {answer.error_message}")
        if len(answer.server_nonce) != NONCE_BYTES:
            raise NodeAuthFailed("node handshake: the server nonce has the wrong length")
        self._server_nonce = answer.server_nonce
        proof = _proof(
            self._key,
            b"client",
            answer.server_nonce,
            self._client_nonce,
            self._node_id,
            self._cluster_id,
        )
        return NodeAuthProveRequest(self._client_nonce, proof)

    def finish(self, answer: NodeAuthProveResponse) -> None:
        """Raises NodeAuthFailed unless the server proved the secret too."""
        if answer.error_code != ErrorCode.NONE:
            raise NodeAuthFailed(f"node handshake refused: {answer.error_message}")
        if self._server_nonce is None:
            raise NodeAuthFailed("node handshake: finish before prove")
        expected = _proof(
            self._key,
            b"server",
            self._server_nonce,
            self._client_nonce,
            self._node_id,
            self._cluster_id,
        )
        if not macs_equal(answer.server_proof, expected):
            raise NodeAuthFailed("node handshake: the server did not prove the cluster secret")
