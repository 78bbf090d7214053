"""Who may hold how much of the node's request-bytes budget while reading (both listeners).

One node-wide ``queued.max.request.bytes`` shared first come, first served let strangers
starve everyone: a few connections that never logged in, each sending an unfinished large
frame, held the whole budget and every other client's next read waited behind them. So the
budget is split in classes:

- connections that have not logged in (SASL, or the node handshake) share a small pool of
  their own, ``unauthenticated_queued_max_request_bytes``, and each holds at most one
  pre-authentication frame (``sasl.server.max.receive.size``) and one read;
- connections that have logged in share the rest, and the connections of one principal hold
  at most ``queued_max_request_bytes_per_principal`` of it, so one user's uploads leave room
  for the others and for logging in.

Sans-I/O apart from trio's events in the budgets: no clock, no socket.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Protocol

import trio


@dataclass(slots=True)
class _Waiter:
    bytes_wanted: int
    granted: trio.Event


class RequestBytesBudget:
    """A byte count shared by all connections of a node; waiters are served in order."""

    def __init__(self, capacity_bytes: int) -> None:
        self.capacity_bytes = capacity_bytes
        self._available = capacity_bytes
        self._waiters: collections.deque[_Waiter] = collections.deque()

    @property
    def available_bytes(self) -> int:
        return self._available

    @property
    def in_use_bytes(self) -> int:
        return self.capacity_bytes - self._available

    @property
    def idle(self) -> bool:
        """Nothing held and nobody waiting."""
        return self._available == self.capacity_bytes and not self._waiters

    def try_take(self, n: int) -> bool:
        """Take ``n`` bytes if they are free and nobody waits for bytes; else take nothing."""
        if not self._waiters and self._available >= n:
            self._available -= n
            return True
        return False

    async def take(self, n: int) -> None:
        """Wait until ``n`` bytes are free and take them (first come, first served)."""
        if self.try_take(n):
            await trio.lowlevel.cancel_shielded_checkpoint()
            return
        waiter = _Waiter(n, trio.Event())
        self._waiters.append(waiter)
        try:
            await waiter.granted.wait()
        except BaseException:
            if waiter.granted.is_set():
                self.give(n)
            else:
                self._waiters.remove(waiter)
                self._wake()
            raise

    def give(self, n: int) -> None:
        self._available += n
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self._available >= self._waiters[0].bytes_wanted:
            waiter = self._waiters.popleft()
            self._available -= waiter.bytes_wanted
            waiter.granted.set()


class ByteBudget(Protocol):
    """What a reader takes its bytes from (a budget, or a share of one)."""

    def try_take(self, n: int) -> bool: ...

    async def take(self, n: int) -> None: ...

    def give(self, n: int) -> None: ...


class PrincipalShare:
    """One principal's share: bytes are taken from its own cap and from the pool of all
    authenticated connections, both or neither."""

    def __init__(self, own: RequestBytesBudget, pool: RequestBytesBudget) -> None:
        self.own = own
        self._pool = pool

    def try_take(self, n: int) -> bool:
        if not self.own.try_take(n):
            return False
        if self._pool.try_take(n):
            return True
        self.own.give(n)
        return False

    async def take(self, n: int) -> None:
        await self.own.take(n)
        try:
            await self._pool.take(n)
        except BaseException:
            self.own.give(n)
            raise

    def give(self, n: int) -> None:
        self._pool.give(n)
        self.own.give(n)


class ReadShares:
    """The node's budget split per class (module docstring); principals' caps are made
    when first needed and dropped when nothing is held or awaited under them."""

    def __init__(
        self,
        authenticated: RequestBytesBudget,
        per_principal_bytes: int,
        unauthenticated: RequestBytesBudget,
    ) -> None:
        self.authenticated = authenticated
        self.unauthenticated = unauthenticated
        self._per_principal_bytes = per_principal_bytes
        self._principals: dict[str, _DroppedWhenIdle] = {}

    @classmethod
    def single(cls, budget: RequestBytesBudget) -> ReadShares:
        """Every connection in one budget (connections built outside a node, in tests)."""
        return cls(budget, budget.capacity_bytes, budget)

    def for_principal(self, principal: str | None) -> ByteBudget:
        """The budget of a connection of ``principal``; None: one that has not logged in."""
        if principal is None:
            return self.unauthenticated
        share = self._principals.get(principal)
        if share is None:
            own = RequestBytesBudget(self._per_principal_bytes)
            share = _DroppedWhenIdle(own, self.authenticated, principal, self._principals)
            self._principals[principal] = share
        return share

    @property
    def principals_holding(self) -> int:
        """Principals with bytes held or awaited now (a test's view of the table)."""
        return len(self._principals)


class _DroppedWhenIdle(PrincipalShare):
    """A principal share that leaves the table once it holds and awaits nothing, so the
    table does not grow with every user name ever seen."""

    def __init__(
        self,
        own: RequestBytesBudget,
        pool: RequestBytesBudget,
        principal: str,
        table: dict[str, _DroppedWhenIdle],
    ) -> None:
        super().__init__(own, pool)
        self._principal = principal
        self._table = table

    async def take(self, n: int) -> None:
        try:
            await super().take(n)
        except BaseException:
            self._drop_if_idle()
            raise

    def give(self, n: int) -> None:
        super().give(n)
        self._drop_if_idle()

    def _drop_if_idle(self) -> None:
        if self.own.idle and self._table.get(self._principal) is self:
            del self._table[self._principal]
