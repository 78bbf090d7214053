"""Kafka-compatible partitioning: murmur2 for keyed records, sticky for records without a key.

Keyed records land where Kafka's default partitioner would put them, so a topic migrated
between the two systems keeps its key -> partition mapping. Records without a key stick to one
partition until its batch is closed (full, or sent after ``linger_ms``), then move to another
partition chosen at random (Kafka's KIP-480): full batches instead of one tiny batch per
partition, with the load still spread over time.
"""

from __future__ import annotations

import random
import struct

_M = 0x5BD1E995
_SEED = 0x9747B28C
_MASK = 0xFFFFFFFF
_KEY_CACHE_LIMIT = 65_536
_WORD = struct.Struct("<I")  # murmur2 reads little-endian 32-bit words


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` of ``data``: a signed 32-bit int."""
    length = len(data)
    m = _M
    mask = _MASK
    h = (_SEED ^ length) & mask
    n4 = length >> 2
    for (word,) in _WORD.iter_unpack(data[: n4 << 2]):
        k = word * m & mask
        h = (h * m & mask) ^ ((k ^ (k >> 24)) * m & mask)
    tail = n4 << 2
    rest = length & 3
    if rest == 3:
        h ^= data[tail + 2] << 16
    if rest >= 2:
        h ^= data[tail + 1] << 8
    if rest >= 1:
        h ^= data[tail]
        h = h * m & mask
    h ^= h >> 13
    h = h * m & mask
    h ^= h >> 15
    return h - 0x100000000 if h & 0x80000000 else h


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """Kafka's ``toPositive(murmur2(key)) % numPartitions``."""
    return (murmur2(key) & 0x7FFFFFFF) % num_partitions


class StickyPartitioner:
    """Chooses partitions for records the caller did not place explicitly.

    ``rng`` decides the sticky partitions; pass a seeded ``random.Random`` for reproducible
    placement (tests, simulations).
    """

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng if rng is not None else random.Random()
        self._sticky: dict[str, int] = {}
        # Keys repeat (user ids, order ids...), and murmur2 in Python costs about a
        # microsecond, so hashes are remembered; the cache is dropped whenever it fills.
        self._hashes: dict[bytes, int] = {}

    def partition(self, topic: str, key: bytes | None, num_partitions: int) -> int:
        """The partition for a record of ``topic`` with ``key``."""
        if key is not None:
            h = self._hashes.get(key)
            if h is None:
                if len(self._hashes) >= _KEY_CACHE_LIMIT:
                    self._hashes.clear()
                h = self._hashes[key] = murmur2(key) & 0x7FFFFFFF
            return h % num_partitions
        p = self._sticky.get(topic)
        if p is None or p >= num_partitions:
            p = self._sticky[topic] = self._rng.randrange(num_partitions)
        return p

    def sticky_partition(self, topic: str) -> int | None:
        """The partition records without a key currently go to (None before the first)."""
        return self._sticky.get(topic)

    def batch_closed(self, topic: str, partition: int, num_partitions: int) -> None:
        """The batch of ``partition`` was closed: if it was the sticky one, pick another.

        The new partition differs from the old one whenever there is a choice.
        """
        if self._sticky.get(topic) != partition or num_partitions <= 1:
            return
        p = self._rng.randrange(num_partitions - 1)
        self._sticky[topic] = p if p < partition else p + 1
