"""Rack-aware replica assignment, deterministic given the broker list and a seeded RNG.

Brokers are interleaved by rack (r1-a, r2-a, r3-a, r1-b, ...), so consecutive positions sit
on different racks; replica j of partition p is the broker ``(start + p + j) mod n`` in that
order. With balanced racks every partition's replicas span min(rf, racks) racks, and
leadership (replica 0) rotates over all brokers. Like Kafka's assignment, it uses only
unfenced brokers.
"""

from __future__ import annotations

import random
from collections import defaultdict

from rillet.metadata_quorum.errors import MetadataError


class AssignmentError(MetadataError):
    """Not enough brokers for the requested replication factor."""


def rack_alternated(brokers: dict[int, str | None]) -> list[int]:
    by_rack: dict[str, list[int]] = defaultdict(list)
    for broker_id in sorted(brokers):
        by_rack[brokers[broker_id] or ""].append(broker_id)
    racks = sorted(by_rack)
    out: list[int] = []
    depth = max((len(v) for v in by_rack.values()), default=0)
    for i in range(depth):
        for rack in racks:
            if i < len(by_rack[rack]):
                out.append(by_rack[rack][i])
    return out


def assign_replicas(
    brokers: dict[int, str | None], partitions: int, replication_factor: int, rng: random.Random
) -> list[list[int]]:
    """Replica lists (preferred leader first) for ``partitions`` partitions."""
    if replication_factor < 1 or partitions < 1:
        raise AssignmentError("partitions and replication factor must be at least 1")
    order = rack_alternated(brokers)
    n = len(order)
    if replication_factor > n:
        raise AssignmentError(
            f"replication factor {replication_factor} exceeds the {n} available brokers"
        )
    start = rng.randrange(n)
    return [
        [order[(start + p + j) % n] for j in range(replication_factor)] for p in range(partitions)
    ]
