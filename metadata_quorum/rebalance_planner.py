"""A plan of replica moves that evens out brokers' load: pure and deterministic.

Three measures, in this order of weight: replicas per broker, bytes per broker (each
replica weighs its partition's size), and preferred leaders per broker (a partition's first
replica). Moves are chosen greedily, one at a time: from the most loaded broker (by
replicas, then bytes) to the least loaded one, the partition whose move leaves the
cluster's (replica, byte) imbalance lowest, taken only when it lowers it; when no single
move does, the best swap of two partitions' replicas between the two brokers (bytes even
out while replica counts stay). A move never
puts two replicas of a partition on one rack when they were on different racks (the
partition spans no fewer racks after it), and never touches a replica on a broker outside
``brokers`` (a dead one: moving it is ``decommission``'s business). Then preferred leaders
are evened out by reordering replica lists (no data moves: the first replica becomes the
leader through a preferred election). Ties are broken by broker id and by topic and
partition, so the same input gives the same plan.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PartitionLoad:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    size_bytes: int = 0


@dataclass(frozen=True, slots=True)
class Rebalance:
    """The partitions whose replica list changes, with the new lists, and how many replica
    copies that makes (a reordering copies nothing)."""

    moves: list[PartitionLoad]
    copies: int


def _squares(values: dict[int, int]) -> int:
    """The sum of squares: with the total fixed, lower means more even (unlike the spread,
    it falls with every move from above the mean to below it)."""
    return sum(v * v for v in values.values())


class _Load:
    def __init__(self, brokers: dict[int, str | None], parts: list[PartitionLoad]) -> None:
        self.brokers = brokers
        self.replicas: dict[int, int] = dict.fromkeys(brokers, 0)
        self.bytes: dict[int, int] = dict.fromkeys(brokers, 0)
        for p in parts:
            for b in p.replicas:
                if b in brokers:
                    self.replicas[b] += 1
                    self.bytes[b] += p.size_bytes

    def score(self) -> tuple[int, int]:
        return _squares(self.replicas), _squares(self.bytes)

    def shift(self, src: int, dst: int, size: int, sign: int = 1) -> None:
        self.replicas[src] -= sign
        self.replicas[dst] += sign
        self.bytes[src] -= sign * size
        self.bytes[dst] += sign * size

    def racks(self, replicas: tuple[int, ...]) -> int:
        return len({self.brokers.get(b) or f"no-rack-{b}" for b in replicas})


def plan_rebalance(
    brokers: dict[int, str | None], partitions: list[PartitionLoad], max_moves: int = 1000
) -> Rebalance:
    """The moves that even out ``brokers`` (id -> rack), at most ``max_moves`` copies."""
    parts = {(p.topic, p.partition): p for p in partitions}
    load = _Load(brokers, partitions)
    copies = 0
    while copies < max_moves and len(brokers) > 1:
        best = _best_move(load, parts)
        steps = [best] if best is not None else _best_swap(load, parts)
        if not steps or copies + len(steps) > max_moves:
            break
        for key, src, dst in steps:
            p = parts[key]
            parts[key] = _moved(p, src, dst)
            load.shift(src, dst, p.size_bytes)
            copies += 1
    _even_leaders(brokers, parts)
    before = {(p.topic, p.partition): p.replicas for p in partitions}
    return Rebalance([parts[k] for k in sorted(parts) if parts[k].replicas != before[k]], copies)


def _moved(p: PartitionLoad, src: int, dst: int) -> PartitionLoad:
    return PartitionLoad(
        p.topic, p.partition, tuple(dst if b == src else b for b in p.replicas), p.size_bytes
    )


def _extremes(load: _Load) -> tuple[set[int], set[int]]:
    ids = sorted(load.brokers)
    sources = {
        max(ids, key=lambda b: (load.replicas[b], load.bytes[b], -b)),
        max(ids, key=lambda b: (load.bytes[b], load.replicas[b], -b)),
    }
    targets = {
        min(ids, key=lambda b: (load.replicas[b], load.bytes[b], b)),
        min(ids, key=lambda b: (load.bytes[b], load.replicas[b], b)),
    }
    return sources, targets


def _rack_safe(load: _Load, p: PartitionLoad, src: int, dst: int) -> bool:
    """Whether a replica of ``p`` may move from ``src`` to ``dst``."""
    if src not in p.replicas or dst in p.replicas:
        return False
    return load.racks(_moved(p, src, dst).replicas) >= load.racks(p.replicas)


def _best_swap(
    load: _Load, parts: dict[tuple[str, int], PartitionLoad]
) -> list[tuple[tuple[str, int], int, int]]:
    """Two moves, a replica of one partition from the byte-heaviest broker to the
    lightest and one of another back, lowering the byte imbalance (none: empty)."""
    ids = sorted(load.brokers)
    src = max(ids, key=lambda b: (load.bytes[b], -b))
    dst = min(ids, key=lambda b: (load.bytes[b], b))
    gap = load.bytes[src] - load.bytes[dst]
    best: tuple[int, tuple[str, int], tuple[str, int]] | None = None
    there = [k for k in sorted(parts) if _rack_safe(load, parts[k], dst, src)]
    for key in sorted(parts):
        p = parts[key]
        if not _rack_safe(load, p, src, dst):
            continue
        for other in there:
            delta = p.size_bytes - parts[other].size_bytes
            if other != key and 0 < delta < gap:
                left = abs(gap - 2 * delta)
                if best is None or left < best[0]:
                    best = (left, key, other)
    if best is None:
        return []
    return [(best[1], src, dst), (best[2], dst, src)]


def _best_move(
    load: _Load, parts: dict[tuple[str, int], PartitionLoad]
) -> tuple[tuple[str, int], int, int] | None:
    sources, targets = _extremes(load)
    now = load.score()
    best: tuple[tuple[int, int], tuple[str, int], int, int] | None = None
    for key in sorted(parts):
        p = parts[key]
        for src in sorted(sources & set(p.replicas)):
            for dst in sorted(targets):
                if not _rack_safe(load, p, src, dst):
                    continue
                load.shift(src, dst, p.size_bytes)
                score = load.score()
                load.shift(src, dst, p.size_bytes, -1)
                if score < now and (best is None or score < best[0]):
                    best = (score, key, src, dst)
    return None if best is None else (best[1], best[2], best[3])


def _even_leaders(
    brokers: dict[int, str | None], parts: dict[tuple[str, int], PartitionLoad]
) -> None:
    """Reorder replica lists so preferred leaders spread evenly (bounded: each step lowers
    the most loaded broker's count)."""
    for _ in range(len(parts) + 1):
        leaders = Counter({b: 0 for b in brokers})
        leaders.update(
            p.replicas[0] for p in parts.values() if p.replicas and p.replicas[0] in brokers
        )
        top = max(sorted(brokers), key=lambda b: (leaders[b], -b))
        swap: tuple[int, tuple[str, int], int] | None = None
        for key in sorted(parts):
            p = parts[key]
            if not p.replicas or p.replicas[0] != top:
                continue
            for b in p.replicas[1:]:
                fewer = b in brokers and leaders[b] + 1 < leaders[top]
                if fewer and (swap is None or leaders[b] < swap[0]):
                    swap = (leaders[b], key, b)
        if swap is None:
            return
        _, key, b = swap
        p = parts[key]
        rest = [r for r in p.replicas if r != b]
        parts[key] = PartitionLoad(p.topic, p.partition, (b, *rest), p.size_bytes)
