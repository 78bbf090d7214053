"""Kafka-compatible partitioning: murmur2 for keyed records, sticky for null keys.

Keyed records land where Kafka's default partitioner would put them, so a topic migrated
between the two keeps its key -> partition mapping. Records without a key stick to one
partition until its batch is full, then move to another chosen at random (KIP-480): full
batches instead of one tiny batch per partition.
"""

from __future__ import annotations

import random

_M = 0x5BD1E995
_SEED = 0x9747B28C
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2``: a signed 32-bit int."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    n4 = length // 4
    for i in range(n4):
        j = i * 4
        k = data[j] | (data[j + 1] << 8) | (data[j + 2] << 16) | (data[j + 3] << 24)
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = (h * _M) & _MASK
        h ^= k
    rest = length % 4
    tail = n4 * 4
    if rest == 3:
        h ^= data[tail + 2] << 16
    if rest >= 2:
        h ^= data[tail + 1] << 8
    if rest >= 1:
        h ^= data[tail]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for_key(key: bytes, num_partitions: int) -> int:
    return (murmur2(key) & 0x7FFFFFFF) % num_partitions


class StickyPartitioner:
    """Keyed: murmur2. Unkeyed: one partition per topic until told its batch filled up."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng or random.Random()
        self._sticky: dict[str, int] = {}

    def partition(self, topic: str, key: bytes | None, num_partitions: int) -> int:
        if key is not None:
            return partition_for_key(key, num_partitions)
        p = self._sticky.get(topic)
        if p is None or p >= num_partitions:
            p = self._rng.randrange(num_partitions)
            self._sticky[topic] = p
        return p

    def batch_full(self, topic: str, partition: int, num_partitions: int) -> None:
        """The sticky partition's batch is full: pick another (a different one if possible)."""
        if self._sticky.get(topic) != partition:
            return
        if num_partitions <= 1:
            return
        p = self._rng.randrange(num_partitions - 1)
        self._sticky[topic] = p if p < partition else p + 1
