"""How far partition moves have got: bytes copied per moving replica, a rate and an ETA.

``MoveRates`` is pure: it is told, at each poll, how many bytes each adding replica holds
and how many the leader's copy has, and says the copy rate (bytes copied since it was first
seen, over the time since) and the time left at that rate. ``watch_moves`` is the driver
that ``rillet cluster rebalance`` and ``decommission`` run until no move is left, printing
one line per moving replica at each poll.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import trio

from rillet.client.reassignment_admin import Reassignments

Replica = tuple[str, int, int]  # topic, partition, broker


@dataclass(frozen=True, slots=True)
class Sample:
    at_s: float
    copied_bytes: int


class MoveRates:
    def __init__(self) -> None:
        self._first: dict[Replica, Sample] = {}
        self._last: dict[Replica, Sample] = {}

    def observe(self, replica: Replica, at_s: float, copied_bytes: int) -> None:
        self._first.setdefault(replica, Sample(at_s, copied_bytes))
        self._last[replica] = Sample(at_s, copied_bytes)

    def rate_bytes_per_s(self, replica: Replica) -> float | None:
        first, last = self._first.get(replica), self._last.get(replica)
        if first is None or last is None or last.at_s <= first.at_s:
            return None
        return max(0.0, (last.copied_bytes - first.copied_bytes) / (last.at_s - first.at_s))

    def eta_s(self, replica: Replica, total_bytes: int) -> float | None:
        """Seconds until the replica holds ``total_bytes`` at its rate so far (None: no
        rate yet, or nothing copied since it was first seen)."""
        rate = self.rate_bytes_per_s(replica)
        last = self._last.get(replica)
        if not rate or last is None:
            return None
        return max(0.0, (total_bytes - last.copied_bytes) / rate)

    def line(self, replica: Replica, copied: int | None, total: int | None) -> str:
        topic, partition, broker = replica
        have = "?" if copied is None else str(copied)
        of = "?" if total is None else str(total)
        text = f"  {topic}-{partition} on broker {broker}: {have} of {of} bytes copied"
        if copied is not None and total:
            text += f" ({100 * min(copied, total) // total}%)"
        rate = self.rate_bytes_per_s(replica)
        if rate is not None:
            text += f", {rate / 1e6:.1f} MB/s"
        eta = self.eta_s(replica, total) if total is not None else None
        if eta is not None:
            text += f", ETA {eta:.0f} s"
        return text


async def watch_moves(
    moves: Reassignments,
    keys: Sequence[tuple[str, int]],
    poll_s: float,
    clock: Callable[[], float],
    out: Callable[[str], None] = print,
) -> None:
    """Poll until none of ``keys`` is moving, printing each moving replica's progress (the
    caller bounds the wait with a cancel scope)."""
    rates = MoveRates()
    wanted = set(keys)
    while True:
        ongoing = [s for s in await moves.ongoing(list(keys)) if (s.topic, s.partition) in wanted]
        out(f"{len(keys) - len(ongoing)} of {len(keys)} partition(s) moved")
        if not ongoing:
            return
        for s in ongoing:
            # An original replica's copy is the size to reach (a leader's, or one in sync).
            source = next((b for b in s.replicas if b not in s.adding_replicas), None)
            total = (
                None if source is None else await moves.replica_bytes(source, s.topic, s.partition)
            )
            for broker in s.adding_replicas:
                copied = await moves.replica_bytes(broker, s.topic, s.partition)
                replica = (s.topic, s.partition, broker)
                if copied is not None:
                    rates.observe(replica, clock(), copied)
                out(rates.line(replica, copied, total))
        await trio.sleep(poll_s)
