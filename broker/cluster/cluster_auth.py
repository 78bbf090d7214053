"""The cluster secret as the nodes use it: the per-connection node handshake (the driver of
:mod:`rillet.broker.cluster.node_handshake`) and the legacy request token.

Internal apis (registration, heartbeats, metadata fetch, ISR changes, producer-id blocks,
follower fetches) are served only on a connection that completed the node handshake, and
only for the node id it proved (broker/network/connection.py). The handshake's proof is bound to a
fresh server nonce, so a captured exchange cannot be replayed on another connection.

Requests still carry ``token`` = HMAC(secret, cluster id). It is the same on every request
and so proves nothing on its own; handlers check it as a second line (it keeps a node of
another cluster with a different secret out even on a path that forgot the handshake).

There is always a secret: a configured one, or one the node generated for itself
(broker/cluster/node_secret.py); an empty one is refused, so node identity never follows from
public information.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from rillet.broker.cluster.node_handshake import NodeAuthClient, NodeAuthFailed, handshake_key
from rillet.client.connection import BrokerConnection
from rillet.client.errors import ConnectionFailedError, RilletError
from rillet.raft.peer_mac import NONCE_BYTES


class ClusterAuth:
    def __init__(self, cluster_id: str, secret: str) -> None:
        self.cluster_id = cluster_id
        # First: it refuses an empty secret (MissingSecret), whose key and token anybody
        # could compute (the cluster id is no secret).
        self.handshake_key = handshake_key(secret)
        self.token = hmac.new(secret.encode(), cluster_id.encode(), hashlib.sha256).digest()

    def check(self, cluster_id: str, token: bytes) -> str | None:
        """None when the request proves the secret; otherwise why it is refused."""
        if cluster_id != self.cluster_id:
            return f"cluster id {cluster_id!r} is not this cluster's ({self.cluster_id!r})"
        if not hmac.compare_digest(token, self.token):
            return "the request does not prove the cluster secret"
        return None

    async def authenticate(self, conn: BrokerConnection, node_id: int, timeout_s: float) -> None:
        """Run the node handshake as ``node_id`` on a fresh connection. Closes it and raises
        ConnectionFailedError (what the callers' retry loops expect of a connection that did
        not work out) when either side fails to prove the secret or the connection breaks."""
        client = NodeAuthClient(
            self.handshake_key, self.cluster_id, node_id, secrets.token_bytes(NONCE_BYTES)
        )
        try:
            begun = await conn.request(client.begin(), timeout_s)
            proved = await conn.request(client.prove(begun), timeout_s)
            client.finish(proved)
        except (NodeAuthFailed, RilletError) as exc:
            conn.close()
            raise ConnectionFailedError(f"node handshake with {conn.address}: {exc}") from exc
