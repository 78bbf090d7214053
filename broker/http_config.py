"""``[http]`` in node.toml: the HTTP endpoint (docs/configuration.md, docs/security.md).

The endpoint serves probes, metrics and the console; these settings say where, over what
(plain HTTP or HTTPS with the node's certificate), to whom (a token, Host names) and how
many connections it holds, for how long, so that silent sockets cannot keep probes out.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class HttpConfig:
    """The HTTP endpoint (docs/monitoring.md): /health, /ready, /metrics and the console."""

    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = 9620  # 0 picks an ephemeral port; the ready file names the bound one
    # HTTPS with the node's certificate: true, false, or unset to follow [tls] (on when the
    # node's listeners are).
    tls: bool | None = field(default=None, metadata={"optional_bool": True})
    # A file holding the bearer token /api/*, the console and labelled /metrics series ask
    # for (read at start; at least MIN_TOKEN_CHARS characters). Empty: no token.
    auth_token_file: str = ""
    # Host header values answered besides this node's own names, IP literals and localhost
    # (comma-separated; ".example.com" matches its subdomains, "*" any name).
    allowed_hosts: str = ""
    # From accept to a complete request head (TLS handshake included); then 408 and close.
    request_head_timeout_ms: int = 1_000
    max_connections: int = 64  # HTTP connections at once (the oldest idle one gives way)
    max_connections_per_ip: int = 8  # of them from one address (its oldest idle gives way)

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"http.port must be 0..65535, not {self.port}")
        if not self.host:
            raise ValueError("http.host must not be empty")
        for name in ("request_head_timeout_ms", "max_connections", "max_connections_per_ip"):
            if getattr(self, name) < 1:
                raise ValueError(f"http.{name} must be >= 1, not {getattr(self, name)}")
