"""Who may hold a connection: Kafka's max.connections and max.connections.per.ip (with
overrides), and a reserve that keeps inter-node traffic flowing when clients hit them.

Sans-I/O bookkeeping shared by both listeners (native and Kafka). A new connection is
*counted* when both limits allow it. When they do not, a native-listener connection may still
be *reserved* (up to ``node_reserve`` at a time): it may then only run the node handshake,
within a short deadline, and is closed otherwise. A connection that authenticates as a node
stops counting against the client limits (``promote_to_node``), so brokers' heartbeats,
replica fetches and controller calls never compete with clients for connection slots.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import Enum


class Slot(Enum):
    COUNTED = "counted"  # a client connection within the limits
    RESERVED = "reserved"  # beyond the client limits: may only authenticate as a node
    NODE = "node"  # authenticated as a node: counts against nothing


@dataclass(slots=True)
class Admission:
    host: str
    slot: Slot


class ConnectionLimiter:
    def __init__(
        self,
        max_connections: int,
        max_connections_per_ip: int,
        overrides: dict[str, int] | None = None,
        node_reserve: int = 0,
    ) -> None:
        self._max = max_connections
        self._per_ip = max_connections_per_ip
        self._overrides = dict(overrides or {})
        self._node_reserve = node_reserve
        self._counted = 0
        self._by_host: Counter[str] = Counter()
        self._reserved = 0
        self.refused = 0  # connections refused since start (for logs and tests)

    @property
    def counted(self) -> int:
        return self._counted

    @property
    def reserved(self) -> int:
        return self._reserved

    def limit_for(self, host: str) -> int:
        return self._overrides.get(host, self._per_ip)

    def admit(self, host: str, may_reserve: bool) -> Admission | None:
        """A slot for a new connection from ``host``, or None (close it at once).
        ``may_reserve``: the listener serves the node handshake (the native one)."""
        if self._counted < self._max and self._by_host[host] < self.limit_for(host):
            self._counted += 1
            self._by_host[host] += 1
            return Admission(host, Slot.COUNTED)
        if may_reserve and self._reserved < self._node_reserve:
            self._reserved += 1
            return Admission(host, Slot.RESERVED)
        self.refused += 1
        return None

    def promote_to_node(self, admission: Admission) -> None:
        """The connection proved to be a node: it no longer counts against anything."""
        self._free(admission)
        admission.slot = Slot.NODE

    def release(self, admission: Admission) -> None:
        self._free(admission)
        admission.slot = Slot.NODE  # idempotent: a second release frees nothing

    def _free(self, admission: Admission) -> None:
        if admission.slot is Slot.COUNTED:
            self._counted -= 1
            self._by_host[admission.host] -= 1
            if not self._by_host[admission.host]:
                del self._by_host[admission.host]
        elif admission.slot is Slot.RESERVED:
            self._reserved -= 1
