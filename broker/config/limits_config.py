"""What one client can take of a node: connections, frames, bytes being read, waits
(``[limits]``, docs/configuration-security.md; Kafka's names in the comments).

Why a module of its own: these are the node's defences against a greedy or hostile client,
read by the connection layer before anything else; they and their checks are read
together, apart from the settings of the log, replication and tasks.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.broker.errors import ConfigError


def parse_overrides(text: str) -> dict[str, int]:
    """Kafka's ``max.connections.per.ip.overrides`` format: ``host:count,host:count``."""
    out: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        host, sep, count = item.rpartition(":")
        if not sep or not host:
            raise ConfigError(f"max_connections_per_ip_overrides: {item!r} is not host:count")
        try:
            limit = int(count)
        except ValueError:
            raise ConfigError(f"max_connections_per_ip_overrides: {item!r}: not a count") from None
        if limit < 0:
            raise ConfigError(f"max_connections_per_ip_overrides: {item!r}: negative count")
        out[host.strip("[]")] = limit
    return out


@dataclass(frozen=True, slots=True)
class LimitsConfig:
    """What one client can take of a node (docs/configuration-security.md, ``[limits]``; the Kafka
    names are in the comments)."""

    max_frame_bytes: int = 100 * 1024 * 1024  # socket.request.max.bytes
    max_in_flight_requests_per_connection: int = 64
    max_connections: int = 10_000  # max.connections (both listeners together)
    receive_buffer_bytes: int = 1024 * 1024
    max_fetch_wait_ms: int = 30_000  # upper bound on a client's fetch long poll
    max_produce_timeout_ms: int = 300_000
    # queued.max.request.bytes: bytes of requests being read, node-wide (docs/security-limits.md).
    queued_max_request_bytes: int = 256 * 1024 * 1024
    max_connections_per_ip: int = 1_000  # max.connections.per.ip
    # max.connections.per.ip.overrides, Kafka's format: "host:count,host:count".
    max_connections_per_ip_overrides: str = ""
    # Connections beyond the client limits that may still authenticate as a node.
    node_connection_reserve: int = 64
    connections_max_idle_ms: int = 600_000  # connections.max.idle.ms
    # A request frame started but not finished within this closes the connection.
    frame_read_timeout_ms: int = 60_000
    # A connection on a reserved slot must finish the node handshake within this.
    node_handshake_timeout_ms: int = 10_000
    # -- Reading before and after authentication (docs/security-limits.md, "Pre-authentication
    # limits"). sasl.server.max.receive.size: the largest frame a connection that has not
    # logged in (SASL, or the node handshake) may send.
    sasl_server_max_receive_size: int = 512 * 1024
    # The part of queued_max_request_bytes that connections not logged in share.
    unauthenticated_queued_max_request_bytes: int = 8 * 1024 * 1024
    # The most of queued_max_request_bytes the connections of one principal may hold; 0:
    # half of what authenticated connections share, and at least one largest frame.
    queued_max_request_bytes_per_principal: int = 0
    # Request bodies at least this large are decoded in a worker thread, not on the loop.
    request_decode_offload_bytes: int = 1024 * 1024
    request_decode_threads: int = 2  # such decodes at once, node-wide

    def __post_init__(self) -> None:
        positive = {
            "max_frame_bytes": self.max_frame_bytes,
            "max_in_flight_requests_per_connection": self.max_in_flight_requests_per_connection,
            "max_connections": self.max_connections,
            "receive_buffer_bytes": self.receive_buffer_bytes,
            "max_connections_per_ip": self.max_connections_per_ip,
            "connections_max_idle_ms": self.connections_max_idle_ms,
            "frame_read_timeout_ms": self.frame_read_timeout_ms,
            "node_handshake_timeout_ms": self.node_handshake_timeout_ms,
        }
        for name, value in positive.items():
            if value < 1:
                raise ValueError(f"{name} must be >= 1, not {value}")
        if self.node_connection_reserve < 0:
            raise ValueError("node_connection_reserve must be >= 0")
        # A whole frame of the largest size, plus one read, must fit in the budget, or
        # such a frame could never be finished.
        least = self.max_frame_bytes + 4 + self.receive_buffer_bytes
        if self.queued_max_request_bytes < least:
            raise ValueError(
                f"queued_max_request_bytes must be >= max_frame_bytes + receive_buffer_bytes "
                f"+ 4 = {least}, not {self.queued_max_request_bytes}"
            )
        parse_overrides(self.max_connections_per_ip_overrides)  # raises ConfigError
        self._check_read_classes()

    def _check_read_classes(self) -> None:
        """The unauthenticated and per-principal shares must each let one connection finish
        the largest frame it may send, within the node-wide budget."""
        for name in ("sasl_server_max_receive_size", "request_decode_threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, not {getattr(self, name)}")
        cap = self.sasl_server_max_receive_size
        if cap > self.max_frame_bytes:
            raise ValueError(
                f"sasl_server_max_receive_size ({cap}) must be <= max_frame_bytes "
                f"({self.max_frame_bytes})"
            )
        least_unauthenticated = cap + 4 + min(self.receive_buffer_bytes, cap + 4)
        if self.unauthenticated_queued_max_request_bytes < least_unauthenticated:
            raise ValueError(
                "unauthenticated_queued_max_request_bytes must be >= "
                f"sasl_server_max_receive_size + 4 + one read = {least_unauthenticated}, "
                f"not {self.unauthenticated_queued_max_request_bytes}"
            )
        least = self.max_frame_bytes + 4 + self.receive_buffer_bytes
        authenticated = self.authenticated_queued_max_request_bytes
        if authenticated < least:
            raise ValueError(
                "queued_max_request_bytes - unauthenticated_queued_max_request_bytes must be "
                f">= max_frame_bytes + receive_buffer_bytes + 4 = {least}, not {authenticated}"
            )
        per_principal = self.queued_max_request_bytes_per_principal
        if per_principal != 0 and not least <= per_principal <= authenticated:
            raise ValueError(
                f"queued_max_request_bytes_per_principal must be 0 or {least}..{authenticated} "
                f"(a whole largest frame, at most the authenticated share), not {per_principal}"
            )

    @property
    def authenticated_queued_max_request_bytes(self) -> int:
        """What connections that have logged in share of queued_max_request_bytes."""
        return self.queued_max_request_bytes - self.unauthenticated_queued_max_request_bytes

    @property
    def principal_queued_max_request_bytes(self) -> int:
        """The share of one principal (queued_max_request_bytes_per_principal, 0 resolved)."""
        if self.queued_max_request_bytes_per_principal:
            return self.queued_max_request_bytes_per_principal
        least = self.max_frame_bytes + 4 + self.receive_buffer_bytes
        return max(least, self.authenticated_queued_max_request_bytes // 2)
