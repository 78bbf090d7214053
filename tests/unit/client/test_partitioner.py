"""Kafka-compatible key partitioning and sticky partitioning for null keys."""

from __future__ import annotations

import random

import pytest

from rillet.client.partitioner import StickyPartitioner, murmur2, partition_for_key


@pytest.mark.parametrize(
    ("key", "expected"),
    [  # vectors from Kafka's UtilsTest.testMurmur2
        (b"21", -973932308),
        (b"foobar", -790332482),
        (b"a-little-bit-long-string", -985981536),
        (b"a-little-bit-longer-string", -1486304829),
        (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
        (b"abc", 479470107),
    ],
)
def test_murmur2_matches_kafka(key: bytes, expected: int) -> None:
    assert murmur2(key) == expected


def test_keyed_partition_is_stable_and_in_range() -> None:
    for n in (1, 3, 12):
        for i in range(200):
            key = f"user-{i}".encode()
            p = partition_for_key(key, n)
            assert 0 <= p < n and p == partition_for_key(key, n)


def test_sticky_partition_changes_only_when_its_batch_fills() -> None:
    part = StickyPartitioner(random.Random(1))
    first = part.partition("t", None, 6)
    assert all(part.partition("t", None, 6) == first for _ in range(50))
    part.batch_full("t", first, 6)
    second = part.partition("t", None, 6)
    assert second != first
    part.batch_full("t", first, 6)  # a stale notification changes nothing
    assert part.partition("t", None, 6) == second
    assert part.partition("t", b"k", 6) == partition_for_key(b"k", 6)
