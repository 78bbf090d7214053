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
    # The console's charts: one sample of the node's counters every interval, the last
    # history_samples of them kept in memory (the default: one hour).
    history_sample_interval_ms: int = 10_000
    history_samples: int = 360
    history_max_series: int = 10  # topics (the busiest) and groups (most lag) per sample
    # The console's message browser: at most this many records, from at most this many bytes
    # of log, per page.
    console_browse_max_records: int = 50
    console_browse_max_bytes: int = 1024 * 1024

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"http.port must be 0..65535, not {self.port}")
        if not self.host:
            raise ValueError("http.host must not be empty")
        for name in ("request_head_timeout_ms", "max_connections", "max_connections_per_ip"):
            if getattr(self, name) < 1:
                raise ValueError(f"http.{name} must be >= 1, not {getattr(self, name)}")
        for name, low, high in LIMITS:
            value = getattr(self, name)
            if not low <= value <= high:
                raise ValueError(f"http.{name} must be {low}..{high}, not {value}")


# The console's bounds: (setting, lowest, highest). A sample costs one walk over the hosted
# partitions and the groups' offsets, so it is not taken more often than every 100 ms; the
# ring and a browser page are held in memory, so they are capped.
LIMITS = (
    ("history_sample_interval_ms", 100, 3_600_000),
    ("history_samples", 2, 100_000),
    ("history_max_series", 1, 100),
    ("console_browse_max_records", 1, 1_000),
    ("console_browse_max_bytes", 1024, 64 * 1024 * 1024),
)
