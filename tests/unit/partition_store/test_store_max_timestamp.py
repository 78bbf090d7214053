"""ListOffsets' max timestamp (-3): the first record carrying the log's largest timestamp."""

from __future__ import annotations

import random
from pathlib import Path

from store_batches import T0, batch, open_log

from rillet.partition_store.max_timestamp import max_timestamp_offset, offset_of_max_timestamp
from rillet.wire.batch import assign_offset_and_epoch, build_batch, stamp_log_append_time


def test_the_first_record_with_the_largest_timestamp_across_segments(tmp_path: Path) -> None:
    rng = random.Random(5)
    log = open_log(tmp_path / "t-0", segment_bytes=2048, index_interval_bytes=200)
    stamps: list[int] = []
    for _ in range(60):
        times = [T0 + rng.randint(0, 500) for _ in range(rng.randint(1, 4))]
        log.append_as_leader(build_batch([(t, None, bytes(20), None) for t in times]), 0, T0)
        stamps += times
    assert len(log.segments()) > 2
    top = max(stamps)
    expected = (stamps.index(top), top)
    assert max_timestamp_offset(log, log.log_end_offset) == expected
    log.close()
    again = open_log(tmp_path / "t-0", segment_bytes=2048, index_interval_bytes=200)
    assert again.recovery_stats.segments_recovered == 0
    assert max_timestamp_offset(again, again.log_end_offset) == expected


def test_a_later_record_in_the_batch_and_ties_keep_the_first(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(batch([b"a", b"b", b"c"], ts=T0, step=10), 0, T0)  # T0, +10, +20
    assert max_timestamp_offset(log, 3) == (2, T0 + 20)
    log.append_as_leader(batch([b"d"], ts=T0 + 20), 0, T0)  # the same time again, later
    assert max_timestamp_offset(log, 4) == (2, T0 + 20)
    log.append_as_leader(batch([b"e", b"f"], ts=T0 + 30, step=-5), 0, T0)
    assert max_timestamp_offset(log, 6) == (4, T0 + 30)


def test_nothing_above_the_high_watermark_and_nothing_in_an_empty_log(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    assert max_timestamp_offset(log, 0) is None
    log.append_as_leader(batch([b"a"], ts=T0 + 50), 0, T0)
    log.append_as_leader(batch([b"b"], ts=T0 + 90), 0, T0)
    assert max_timestamp_offset(log, 1) is None  # offset 1 is not committed yet
    assert max_timestamp_offset(log, 2) == (1, T0 + 90)


def test_log_append_time_points_at_the_batch_start() -> None:
    data = bytearray(build_batch([(T0 + i, None, b"v", None) for i in (3, 9, 1)]))
    assign_offset_and_epoch(data, 0, 7, 0)
    assert offset_of_max_timestamp(bytes(data)) == (8, T0 + 9)
    stamp_log_append_time(data, 0, T0 + 100)
    assert offset_of_max_timestamp(bytes(data)) == (7, T0 + 100)
