"""Retention: whole segments by time and size, the log start offset, delayed file deletion."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from store_batches import T0, batch, open_log, records_of

from rillet.partition_store.config import LogConfig
from rillet.partition_store.errors import OffsetOutOfRange
from rillet.partition_store.log import PartitionLog
from rillet.partition_store.retention import deletable_segment_count
from rillet.partition_store.segment import SegmentInfo

HOUR = 3600 * 1000


def fill(directory: Path, count: int, ts_step: int = 0, **config: int) -> PartitionLog:
    log = open_log(directory, segment_bytes=1024, **config)
    for i in range(count):
        log.append_as_leader(batch([bytes(100)], ts=T0 + i * ts_step), 0, T0)
    return log


def test_retention_by_size_keeps_at_least_the_limit(tmp_path: Path) -> None:
    log = fill(tmp_path / "t-0", 60, retention_bytes=3000, file_delete_delay_ms=0)
    before = log.size_bytes
    deleted = log.delete_expired_segments(T0)
    assert deleted > 0
    assert 3000 <= log.size_bytes < 3000 + 1024
    assert log.size_bytes < before
    first = log.segments()[0]
    assert log.log_start_offset == first.base_offset > 0
    assert log.delete_expired_segments(T0) == 0  # idempotent


def written_at(directory: Path, ms: int) -> None:
    """Set every segment's last write (the ``.log`` file's mtime) to ``ms``: the tests' clock
    is not the file system's."""
    for path in directory.glob("*.log"):
        os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))


def test_retention_by_time_uses_each_segments_largest_timestamp(tmp_path: Path) -> None:
    log = fill(tmp_path / "t-0", 40, ts_step=HOUR, retention_ms=10 * HOUR, file_delete_delay_ms=0)
    written_at(tmp_path / "t-0", T0)
    now = T0 + 39 * HOUR
    log.delete_expired_segments(now)
    remaining = log.segments()
    # every remaining non-active segment has something newer than now - retention
    assert all(now - s.max_timestamp_ms <= 10 * HOUR for s in remaining[:-1])
    assert records_of(log.read_bytes(log.log_start_offset, 100))[0][0] == log.log_start_offset
    assert log.delete_expired_segments(now + 1000 * HOUR) == len(remaining) - 1
    assert len(log.segments()) == 1  # the active segment is never deleted
    assert log.log_start_offset == log.segments()[0].base_offset


def test_negative_retention_keeps_everything(tmp_path: Path) -> None:
    log = fill(tmp_path / "t-0", 40, retention_ms=-1, retention_bytes=-1)
    count = len(log.segments())
    assert log.delete_expired_segments(T0 + 10**12) == 0
    assert len(log.segments()) == count and log.log_start_offset == 0


def test_reading_below_the_log_start_raises(tmp_path: Path) -> None:
    log = fill(tmp_path / "t-0", 40, retention_bytes=2048, file_delete_delay_ms=0)
    log.delete_expired_segments(T0)
    start = log.log_start_offset
    with pytest.raises(OffsetOutOfRange) as info:
        log.read(start - 1, 100)
    assert info.value.log_start_offset == start
    assert log.read(start, 100).first_offset == start


def test_deleted_segments_stay_readable_until_the_delay_passed(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = fill(directory, 40, retention_bytes=2048, file_delete_delay_ms=1000)
    log.flush()  # the indexes' files are written (created) at a flush
    region = log.read(0, 200).region  # a fetch in flight (sendfile not done yet)
    assert region is not None
    expected = log.read_bytes(0, 200)
    assert log.delete_expired_segments(T0) > 0
    deleted = sorted(p.name for p in directory.glob("*.deleted"))
    assert "00000000000000000000.log.deleted" in deleted
    assert "00000000000000000000.index.deleted" in deleted
    assert not (directory / "00000000000000000000.log").exists()
    assert os.pread(region.fd, region.length, region.position) == expected
    assert log.purge_deleted_segments(T0 + 999) == 0
    assert log.delete_expired_segments(T0 + 1000) == 0
    assert not list(directory.glob("*.deleted"))
    with pytest.raises(OSError):
        os.fstat(region.fd)  # closed at last


def test_stray_deleted_files_are_removed_on_open(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = fill(directory, 40, retention_bytes=2048, file_delete_delay_ms=10**9)
    log.delete_expired_segments(T0)
    start, end = log.log_start_offset, log.log_end_offset
    log.close()  # finishes pending deletions
    assert not list(directory.glob("*.deleted"))
    (directory / "00000000000000000000.log.deleted").write_bytes(b"junk")  # from a crash
    again = open_log(directory, segment_bytes=1024)
    assert (again.log_start_offset, again.log_end_offset) == (start, end)
    assert again.recovery_stats.stray_files_removed == 1
    assert not list(directory.glob("*.deleted"))


def test_advance_log_start_offset_then_segments_below_it_go(tmp_path: Path) -> None:
    log = fill(tmp_path / "t-0", 40, file_delete_delay_ms=0)
    second = log.segments()[1]
    log.advance_log_start_offset(second.base_offset + 1)  # like DeleteRecords
    assert log.log_start_offset == second.base_offset + 1
    with pytest.raises(OffsetOutOfRange):
        log.read(second.base_offset, 100)
    log.advance_log_start_offset(3)  # never moves backwards
    assert log.log_start_offset == second.base_offset + 1
    assert log.delete_expired_segments(T0) == 1  # only the first lies wholly below it
    assert log.log_start_offset == second.base_offset + 1
    with pytest.raises(OffsetOutOfRange):
        log.advance_log_start_offset(log.log_end_offset + 1)
    log.close()
    again = open_log(tmp_path / "t-0", segment_bytes=1024)
    assert again.log_start_offset == second.base_offset + 1


def info(base: int, end: int, size: int, max_ts: int, written: int = -1) -> SegmentInfo:
    p = Path("x")
    return SegmentInfo(base, end, size, max_ts, p, p, p, written)


def test_retention_decision_stops_at_the_first_segment_to_keep() -> None:
    segments = [
        info(0, 10, 100, 50),
        info(10, 20, 100, 500),
        info(20, 30, 100, 60),
        info(30, 30, 0, -1),
    ]
    by_time = LogConfig(retention_ms=100)
    assert deletable_segment_count(segments, by_time, 200, 0) == 1  # 500 is young; 60 waits
    by_size = LogConfig(retention_ms=-1, retention_bytes=150)
    assert deletable_segment_count(segments, by_size, 0, 0) == 1  # 300 - 100 >= 150, then no
    keep_all = LogConfig(retention_ms=-1)
    assert deletable_segment_count(segments, keep_all, 0, 20) == 2
    assert deletable_segment_count(segments, keep_all, 0, 19) == 1
    assert deletable_segment_count(segments, LogConfig(retention_bytes=0), 0, 0) == 3


def test_retention_by_time_counts_from_the_later_of_stamp_and_write() -> None:
    by_time = LogConfig(retention_ms=100)
    active = info(30, 30, 0, -1, 1000)
    stamped_1970 = [info(0, 10, 100, 0, 950), info(10, 20, 100, 0, 990), active]
    assert deletable_segment_count(stamped_1970, by_time, 1000, 0) == 0  # written just now
    assert deletable_segment_count(stamped_1970, by_time, 1060, 0) == 1  # 950 is old now
    assert deletable_segment_count(stamped_1970, by_time, 1091, 0) == 2
    written_long_ago = [info(0, 10, 100, 0, 5), active]
    assert deletable_segment_count(written_long_ago, by_time, 1000, 0) == 1
    # a recent stamp keeps an old write, as before (Kafka's rule)
    assert deletable_segment_count([info(0, 10, 100, 990, 5), active], by_time, 1000, 0) == 0


def test_records_stamped_1970_outlive_retention_passes_and_restarts(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    now = time.time_ns() // 1_000_000  # the file system's clock: mtimes are on it
    log = open_log(directory, now, segment_bytes=1024, retention_ms=HOUR, file_delete_delay_ms=0)
    for _ in range(30):
        log.append_as_leader(batch([bytes(100)], ts=0), 0, now)
    sealed = len(log.segments()) - 1
    assert sealed > 1 and all(s.last_written_ms >= now - 1000 for s in log.segments())
    assert log.delete_expired_segments(now) == 0
    log.close()
    again = open_log(directory, now, segment_bytes=1024, retention_ms=HOUR)
    assert again.delete_expired_segments(now + HOUR - 1000) == 0  # the mtime survived
    written_at(directory, now - 2 * HOUR)
    again.close()  # neither a close nor an open counts as a write
    third = open_log(directory, now, segment_bytes=1024, retention_ms=HOUR)
    assert third.delete_expired_segments(now) == sealed
    assert third.log_start_offset == third.segments()[0].base_offset > 0
