"""Proof of the cluster secret on internal requests (registration, heartbeat, metadata fetch).

A broker sends HMAC-SHA256(secret, cluster id); a voter compares it in constant time. This
keeps a node of another cluster, or a process that does not hold the secret, from registering
a broker or reading the metadata log through the client listener. It is a shared-password
check, not transport security: the token is the same on every request, so run the cluster on
a network you trust (docs/operations.md) until the own Raft engine's authenticated transport
covers these apis too.
"""

from __future__ import annotations

import hashlib
import hmac


class ClusterAuth:
    def __init__(self, cluster_id: str, secret: str) -> None:
        self.cluster_id = cluster_id
        self.token = (
            hmac.new(secret.encode(), cluster_id.encode(), hashlib.sha256).digest()
            if secret
            else b""
        )

    def check(self, cluster_id: str, token: bytes) -> str | None:
        """None when the request proves the secret; otherwise why it is refused."""
        if cluster_id != self.cluster_id:
            return f"cluster id {cluster_id!r} is not this cluster's ({self.cluster_id!r})"
        if not hmac.compare_digest(token, self.token):
            return "the request does not prove the cluster secret"
        return None
