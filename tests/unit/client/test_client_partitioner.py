"""Kafka-compatible key partitioning and sticky partitioning for records without a key."""

from __future__ import annotations

import random

import pytest

from rillet.client.partitioner import StickyPartitioner, murmur2, partition_for_key


@pytest.mark.parametrize(
    ("key", "expected"),
    [  # Kafka's UtilsTest.testMurmur2 vectors
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


def test_keyed_partition_is_kafkas_positive_modulo() -> None:
    assert partition_for_key(b"foobar", 7) == (-790332482 & 0x7FFFFFFF) % 7
    part = StickyPartitioner(random.Random(0))
    for n in (1, 3, 12):
        for i in range(300):
            key = f"user-{i}".encode()
            p = partition_for_key(key, n)
            assert 0 <= p < n
            assert part.partition("t", key, n) == p  # the hash cache changes nothing
            assert part.partition("t", key, n) == p


def test_sticky_partition_moves_only_when_its_batch_closes() -> None:
    part = StickyPartitioner(random.Random(1))
    first = part.partition("t", None, 6)
    assert all(part.partition("t", None, 6) == first for _ in range(50))
    part.batch_closed("t", (first + 1) % 6, 6)  # another partition's batch: no change
    assert part.partition("t", None, 6) == first
    part.batch_closed("t", first, 6)
    second = part.partition("t", None, 6)
    assert second != first
    assert part.sticky_partition("t") == second
    assert part.partition("other", None, 6) in range(6)  # stickiness is per topic


def test_sticky_choice_is_reproducible_with_a_seed() -> None:
    def walk(seed: int) -> list[int]:
        part = StickyPartitioner(random.Random(seed))
        out = []
        for _ in range(20):
            p = part.partition("t", None, 5)
            out.append(p)
            part.batch_closed("t", p, 5)
        return out

    assert walk(7) == walk(7)
    assert len(set(walk(7))) > 1


def test_single_partition_topic_stays_put() -> None:
    part = StickyPartitioner(random.Random(1))
    assert part.partition("t", None, 1) == 0
    part.batch_closed("t", 0, 1)
    assert part.partition("t", None, 1) == 0
