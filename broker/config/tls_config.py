"""``[tls]`` in node.toml: TLS on every link of the node (docs/security.md, "TLS").

With ``certfile`` and ``keyfile`` set, the native and Kafka listeners accept only TLS, and
the node's own connections to other nodes (inter-node calls, replica fetches, the Raft
transport) use TLS too, presenting the same certificate. ``cafile`` holds the authorities
that certificates of clients and of other nodes are checked against (the system's when
empty). ``client_auth`` is Kafka's ``ssl.client.auth``: ``required`` asks every client for a
certificate signed by ``cafile`` (mutual TLS), ``requested`` checks one if offered.
Certificates are re-read when their files change: no restart to rotate them.
"""

from __future__ import annotations

from dataclasses import dataclass

CLIENT_AUTH_MODES = ("none", "requested", "required")


@dataclass(frozen=True, slots=True)
class TlsConfig:
    certfile: str = ""  # PEM: this node's certificate (and chain)
    keyfile: str = ""  # PEM: its private key
    cafile: str = ""  # PEM: authorities for clients' and nodes' certificates
    client_auth: str = "none"
    handshake_timeout_ms: int = 10_000

    @property
    def enabled(self) -> bool:
        return bool(self.certfile)

    def __post_init__(self) -> None:
        if bool(self.certfile) != bool(self.keyfile):
            raise ValueError("tls.certfile and tls.keyfile go together")
        if self.client_auth not in CLIENT_AUTH_MODES:
            modes = ", ".join(CLIENT_AUTH_MODES)
            raise ValueError(f"tls.client_auth must be one of {modes}, not {self.client_auth!r}")
        if self.client_auth != "none" and not self.cafile:
            raise ValueError(f"tls.client_auth = {self.client_auth!r} needs tls.cafile")
        if self.cafile and not self.certfile:
            raise ValueError("tls.cafile without tls.certfile: the listeners would be plaintext")
        if self.handshake_timeout_ms < 1:
            raise ValueError("tls.handshake_timeout_ms must be >= 1")
