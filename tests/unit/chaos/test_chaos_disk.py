"""Tail damage and replica summaries on real segment files (and the store recovering them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rillet.chaos.disk import corrupt_tails, partition_dir, replica_copy, segments
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import assign_offset_and_epoch, build_batch

TOPIC = "t"
T0 = 1_700_000_000_000


def write_log(work: Path, partition: int, batches: int, per_batch: int = 3) -> list[int]:
    """One segment of ``batches`` batches; returns each batch's end position."""
    data = bytearray()
    ends = []
    for b in range(batches):
        values = [f"p{partition}-{b}-{i}".encode() for i in range(per_batch)]
        batch = bytearray(build_batch([(T0, None, v, None) for v in values]))
        assign_offset_and_epoch(batch, 0, b * per_batch, 0)
        data += batch
        ends.append(len(data))
    directory = partition_dir(work, TOPIC, partition)
    directory.mkdir(parents=True)
    (directory / "00000000000000000000.log").write_bytes(bytes(data))
    return ends


def recovered_end(work: Path, partition: int) -> int:
    log = PartitionLog.open(
        partition_dir(work, TOPIC, partition), LogConfig(), T0, TOPIC, partition
    )
    try:
        return log.log_end_offset
    finally:
        log.close()


def test_a_torn_tail_is_cut_back_to_the_last_whole_batch(tmp_path: Path) -> None:
    ends = write_log(tmp_path, 0, 4)
    done = corrupt_tails(tmp_path, TOPIC, 1, mode="truncate", nbytes=5, count=1, seed=1)
    assert done == [
        {"partition": 0, "file": "00000000000000000000.log", "size": ends[-1], "truncated": 5}
    ]
    assert segments(partition_dir(tmp_path, TOPIC, 0))[0].stat().st_size == ends[-1] - 5
    assert recovered_end(tmp_path, 0) == 9  # the fourth batch (offsets 9..11) is gone


def test_a_flipped_byte_fails_the_crc_of_its_batch(tmp_path: Path) -> None:
    ends = write_log(tmp_path, 0, 4)
    done = corrupt_tails(tmp_path, TOPIC, 1, mode="flip", nbytes=8, count=1, seed=2)
    position = done[0]["flipped"]
    assert ends[-1] - 8 <= position < ends[-1]
    assert recovered_end(tmp_path, 0) == 9


def test_the_seed_chooses_the_partitions_and_positions(tmp_path: Path) -> None:
    runs = []
    for attempt in range(2):
        work = tmp_path / str(attempt)
        for p in range(5):
            write_log(work, p, 3)
        runs.append(corrupt_tails(work, TOPIC, 5, mode="flip", nbytes=40, count=2, seed=9))
    assert runs[0] == runs[1]
    assert len(runs[0]) == 2
    other = tmp_path / "other"
    for p in range(5):
        write_log(other, p, 3)
    picks = {
        str(corrupt_tails(other, TOPIC, 5, mode="flip", nbytes=40, count=2, seed=s))
        for s in range(10)
    }
    assert len(picks) > 1


def test_missing_and_empty_partitions_are_skipped(tmp_path: Path) -> None:
    directory = partition_dir(tmp_path, TOPIC, 1)
    directory.mkdir(parents=True)
    (directory / "00000000000000000000.log").write_bytes(b"")
    done = corrupt_tails(tmp_path, TOPIC, 2, mode="truncate", nbytes=3, count=2, seed=0)
    assert [d.get("skipped") for d in done] == ["no segment", "empty"]
    with pytest.raises(ValueError):
        corrupt_tails(tmp_path, TOPIC, 2, mode="shred", nbytes=3, count=2, seed=0)


def test_replica_copies_compare_the_bytes_below_the_high_watermark(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    ends = write_log(a, 0, 4)
    write_log(b, 0, 4)
    full_a, full_b = replica_copy(a, 1, TOPIC, 0, 12), replica_copy(b, 2, TOPIC, 0, 12)
    assert (full_a.prefix_bytes, full_a.prefix_sha256) == (
        full_b.prefix_bytes,
        full_b.prefix_sha256,
    )
    assert full_a.prefix_bytes == ends[-1] and full_a.log_end_offset == 12
    # B diverges in its last batch, which lies above a high watermark of 9: still equal below.
    corrupt_tails(b, TOPIC, 1, mode="flip", nbytes=8, count=1, seed=3)
    below_a, below_b = replica_copy(a, 1, TOPIC, 0, 9), replica_copy(b, 2, TOPIC, 0, 9)
    assert below_a.prefix_bytes == ends[2]
    assert below_a.prefix_sha256 == below_b.prefix_sha256
    assert below_b.log_end_offset == 9  # its damaged last batch is not counted
    assert replica_copy(b, 2, TOPIC, 0, 12).log_end_offset == 9


def test_a_copy_spanning_segments_equals_one_in_a_single_segment(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    ends = write_log(one, 0, 4)
    data = segments(partition_dir(one, TOPIC, 0))[0].read_bytes()
    directory = partition_dir(two, TOPIC, 0)
    directory.mkdir(parents=True)
    (directory / "00000000000000000000.log").write_bytes(data[: ends[1]])
    (directory / "00000000000000000006.log").write_bytes(data[ends[1] :])
    assert replica_copy(one, 1, TOPIC, 0, 12).prefix_sha256 == (
        replica_copy(two, 2, TOPIC, 0, 12).prefix_sha256
    )


def test_a_partition_without_files_is_an_empty_copy(tmp_path: Path) -> None:
    copy = replica_copy(tmp_path, 1, TOPIC, 0, 0)
    assert (copy.total_bytes, copy.prefix_bytes, copy.log_end_offset, copy.error) == (0, 0, 0, None)
