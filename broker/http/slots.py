"""Connection slots of the HTTP endpoint: a bounded number; the oldest idle one gives way.

Sans-I/O bookkeeping; the server cancels the connections :meth:`HttpSlots.admit` evicts.

A connection is *idle* from accept until its request head is complete, then *busy* while it
is answered. When a new connection would exceed ``max_per_ip`` for its address, that
address's oldest idle connection gives way; when it would exceed ``max_connections``, the
oldest idle connection of any address does. Only when every slot is busy answering is the
new connection refused. So sockets that connect and send nothing cannot keep a probe out:
a probe sends its head at once, and is evicted only after every idle connection opened
before it. Evicting rather than reserving slots for probes is needed because the path is
unknown until the head arrives; the per-address cap keeps one address from evicting the
connections of others. Each idle connection also has a short deadline
(``http.request_head_timeout_ms``), so eviction is rare outside an attack.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SlotGrant:
    connection: int | None  # the new connection's id; None: refused (every slot is busy)
    evicted: tuple[int, ...]  # idle connections to close to make room


class HttpSlots:
    def __init__(self, max_connections: int, max_per_ip: int) -> None:
        self._max = max_connections
        self._per_ip = max_per_ip
        self._idle: dict[int, str] = {}  # id -> address, oldest first
        self._busy: dict[int, str] = {}
        self._by_host: Counter[str] = Counter()
        self._next_id = 0
        self.evictions = 0  # since start, for logs and tests
        self.refused = 0

    @property
    def open_connections(self) -> int:
        return len(self._idle) + len(self._busy)

    def admit(self, host: str) -> SlotGrant:
        evicted: list[int] = []
        if self._by_host[host] >= self._per_ip:
            victim = next((c for c, h in self._idle.items() if h == host), None)
            if victim is None:
                return self._refuse()
            evicted.append(victim)
            self.release(victim)
        if self.open_connections >= self._max:
            victim = next(iter(self._idle), None)
            if victim is None:
                return self._refuse()
            evicted.append(victim)
            self.release(victim)
        self.evictions += len(evicted)
        connection = self._next_id
        self._next_id += 1
        self._idle[connection] = host
        self._by_host[host] += 1
        return SlotGrant(connection, tuple(evicted))

    def _refuse(self) -> SlotGrant:
        # Never after an eviction in the same call: a per-address victim frees a slot.
        self.refused += 1
        return SlotGrant(None, ())

    def started(self, connection: int) -> None:
        """The connection's head is complete: it is answered, not evicted."""
        host = self._idle.pop(connection, None)
        if host is not None:
            self._busy[connection] = host

    def release(self, connection: int) -> None:
        """The connection closed (or was evicted); releasing twice is harmless."""
        host = self._idle.pop(connection, None) or self._busy.pop(connection, None)
        if host is None:
            return
        self._by_host[host] -= 1
        if not self._by_host[host]:
            del self._by_host[host]
