"""Who may hold an inbound connection to the Raft port, sans I/O.

Every inbound connection counts against ``max_connections`` for as long as it is open. While
it has not authenticated it also counts against ``max_connections_per_ip`` of its source
address; a peer that proved the cluster secret stops counting there (voters of a cluster
run on one host in tests and local clusters, and each holds one connection to us). A
connection over either cap is closed on accept, before anything is read from it, so
addresses that do not hold the secret can hold at most ``max_connections_per_ip``
connections each, and each only until the handshake deadline.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class InboundLimits:
    max_connections: int = 32
    max_connections_per_ip: int = 4
    handshake_timeout_ms: int = 3_000  # TLS handshake and hello, from accept


@dataclass(slots=True)
class Admitted:
    """An admitted connection's hold on the caps (release it exactly once)."""

    host: str
    authenticated: bool = False
    released: bool = False


class InboundConnections:
    def __init__(self, limits: InboundLimits) -> None:
        self._limits = limits
        self._open = 0
        self._unauthenticated: Counter[str] = Counter()
        self.refused = 0  # connections closed on accept, since start

    @property
    def open(self) -> int:
        return self._open

    def unauthenticated_from(self, host: str) -> int:
        return self._unauthenticated[host]

    def admit(self, host: str) -> Admitted | None:
        """A hold for a new connection from ``host``, or None: close it at once."""
        if (
            self._open >= self._limits.max_connections
            or self._unauthenticated[host] >= self._limits.max_connections_per_ip
        ):
            self.refused += 1
            return None
        self._open += 1
        self._unauthenticated[host] += 1
        return Admitted(host)

    def authenticated(self, admitted: Admitted) -> None:
        """The peer proved the secret: it no longer counts against its address's cap."""
        if not admitted.authenticated and not admitted.released:
            admitted.authenticated = True
            self._forget_unauthenticated(admitted.host)

    def release(self, admitted: Admitted) -> None:
        if admitted.released:
            return
        admitted.released = True
        self._open -= 1
        if not admitted.authenticated:
            self._forget_unauthenticated(admitted.host)

    def _forget_unauthenticated(self, host: str) -> None:
        self._unauthenticated[host] -= 1
        if not self._unauthenticated[host]:
            del self._unauthenticated[host]
