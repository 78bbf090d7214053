"""PartitionLog: append/read, rolling, indexes, timestamps, retention, truncation, flushing."""

from __future__ import annotations

from pathlib import Path

import pytest

from rillet.partition_store.config import LogConfig
from rillet.partition_store.errors import (
    InvalidRecords,
    InvalidTruncation,
    NonContiguousAppend,
    OffsetOutOfRange,
    RecordTooLarge,
    StoreConfigError,
)
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import build_batch, decode_records, iter_batches

T0 = 1_700_000_000_000


def batch(values: list[bytes], ts: int = T0) -> bytes:
    return build_batch([(ts, None, v, None) for v in values])


def open_log(path: Path, **cfg: int) -> PartitionLog:
    return PartitionLog.open(path, LogConfig(**cfg), T0, "t", 0)


def records_of(data: bytes) -> list[tuple[int, bytes | None]]:
    return [
        (r.offset, r.value)
        for v in iter_batches(data, 1 << 30)
        for r in decode_records(data, v.position)
    ]


def test_offsets_are_contiguous_and_reads_return_whole_batches(tmp_path: Path) -> None:
    log = open_log(tmp_path / "p")
    for i in range(50):
        r = log.append_as_leader(batch([b"a%d" % i, b"b%d" % i]), 7, T0)
        assert (r.first_offset, r.last_offset) == (2 * i, 2 * i + 1)
    assert log.log_end_offset == 100
    got = records_of(log.read_bytes(41, 1 << 20))
    assert got[0] == (40, b"a20")  # the whole batch holding offset 41
    assert [o for o, _ in got] == list(range(40, 100))
    assert log.read(100, 1000).region is None
    with pytest.raises(OffsetOutOfRange):
        log.read(101, 1000)


def test_max_offset_and_max_bytes_bound_reads_but_one_batch_always_fits(tmp_path: Path) -> None:
    log = open_log(tmp_path / "p")
    for _i in range(10):
        log.append_as_leader(batch([bytes(100)] * 3), 0, T0)
    assert [o for o, _ in records_of(log.read_bytes(0, 1 << 20, max_offset=6))] == list(range(6))
    one = log.read(0, 10)  # smaller than a batch: KIP-74 returns the first batch whole
    assert one.region is not None and len(records_of(log.read_bytes(0, 10))) == 3
    none = log.read(0, 10, min_one_batch=False)
    assert none.region is None


def test_segments_roll_by_size_and_by_time(tmp_path: Path) -> None:
    log = open_log(tmp_path / "p", segment_bytes=1024, segment_ms=1000)
    for _ in range(30):
        log.append_as_leader(batch([bytes(100)]), 0, T0)
    sizes = [s.size_bytes for s in log.segments()]
    assert len(sizes) > 3 and all(s <= 1024 for s in sizes)
    count = len(sizes)
    log.append_as_leader(batch([b"late"]), 0, T0 + 5000)
    log.append_as_leader(batch([b"later"]), 0, T0 + 5001)
    assert len(log.segments()) == count + 1
    names = sorted(p.name for p in (tmp_path / "p").glob("*.log"))
    assert names[0] == "00000000000000000000.log"
    assert next(o for o, _ in records_of(log.read_bytes(0, 1 << 20))) == 0


def test_offset_for_timestamp(tmp_path: Path) -> None:
    log = open_log(tmp_path / "p", segment_bytes=1024, index_interval_bytes=128)
    for i in range(40):
        log.append_as_leader(batch([bytes(50)], ts=T0 + 10 * i), 0, T0)
    assert log.offset_for_timestamp(T0) == (0, T0)
    assert log.offset_for_timestamp(T0 + 105) == (11, T0 + 110)
    assert log.offset_for_timestamp(T0 + 390) == (39, T0 + 390)
    assert log.offset_for_timestamp(T0 + 391) is None


def test_retention_by_size_and_time_moves_log_start(tmp_path: Path) -> None:
    log = open_log(
        tmp_path / "p", segment_bytes=1024, retention_bytes=2048, file_delete_delay_ms=100
    )
    for _ in range(40):
        log.append_as_leader(batch([bytes(100)]), 0, T0)
    deleted = log.delete_expired_segments(T0)
    assert deleted > 0
    assert log.size_bytes <= 2048 + 1024
    start = log.log_start_offset
    assert start == log.segments()[0].base_offset > 0
    with pytest.raises(OffsetOutOfRange):
        log.read(start - 1, 100)
    assert list((tmp_path / "p").glob("*.deleted"))  # kept for in-flight reads
    log.delete_expired_segments(T0 + 101)
    assert not list((tmp_path / "p").glob("*.deleted"))
    timed = open_log(tmp_path / "q", segment_bytes=1024, retention_ms=1000, file_delete_delay_ms=0)
    for i in range(20):
        timed.append_as_leader(batch([bytes(100)], ts=T0 + i), 0, T0)
    assert timed.delete_expired_segments(T0 + 500) == 0
    assert timed.delete_expired_segments(T0 + 5000) > 0
    assert len(timed.segments()) == 1  # the active segment is never deleted


def test_invalid_appends_write_nothing(tmp_path: Path) -> None:
    log = open_log(tmp_path / "p", max_batch_bytes=512)
    good = batch([b"ok"])
    bad = bytearray(batch([b"bad"]))
    bad[-2] ^= 1
    with pytest.raises(InvalidRecords):
        log.append_as_leader(good + bytes(bad), 0, T0)
    with pytest.raises(RecordTooLarge):
        log.append_as_leader(batch([bytes(600)]), 0, T0)
    with pytest.raises(InvalidRecords):
        log.append_as_leader(b"", 0, T0)
    assert log.log_end_offset == 0 and log.size_bytes == 0


def test_follower_append_and_truncation(tmp_path: Path) -> None:
    leader = open_log(tmp_path / "l")
    for i in range(5):
        leader.append_as_leader(batch([b"%d" % i, b"x"]), 3, T0)
    follower = open_log(tmp_path / "f")
    follower.append_as_follower(leader.read_bytes(0, 1 << 20), T0)
    assert follower.log_end_offset == 10
    with pytest.raises(NonContiguousAppend):
        follower.append_as_follower(leader.read_bytes(4, 1 << 20), T0)
    with pytest.raises(InvalidTruncation):
        follower.truncate_to(5)  # inside a batch
    follower.truncate_to(6)
    assert follower.log_end_offset == 6
    follower.append_as_follower(leader.read_bytes(6, 1 << 20), T0)
    assert follower.read_bytes(0, 1 << 20) == leader.read_bytes(0, 1 << 20)


def test_flush_policy(tmp_path: Path) -> None:
    log = open_log(tmp_path / "p", flush_messages=3)
    log.append_as_leader(batch([b"a", b"b"]), 0, T0)
    assert not log.needs_flush(T0)
    log.append_as_leader(batch([b"c"]), 0, T0)
    assert log.needs_flush(T0)
    plan = log.flush_plan()
    assert plan is not None and plan.up_to_offset == 3
    log.append_as_leader(batch([b"d"]), 0, T0)  # appends may continue while plan runs
    plan.run()
    log.flush_completed(plan)
    assert log.recovery_point == 3
    timed = open_log(tmp_path / "q", flush_ms=100)
    timed.append_as_leader(batch([b"a"]), 0, T0)
    assert not timed.needs_flush(T0 + 50) and timed.needs_flush(T0 + 100)


def test_clean_reopen_skips_recovery_and_keeps_everything(tmp_path: Path) -> None:
    log = open_log(tmp_path / "p", segment_bytes=1024)
    for i in range(30):
        log.append_as_leader(batch([b"v%d" % i]), 0, T0)
    before = log.read_bytes(0, 1 << 20)
    log.close()
    again = open_log(tmp_path / "p", segment_bytes=1024)
    assert again.recovery_stats.clean_shutdown
    assert again.recovery_stats.segments_recovered == 0
    assert again.log_end_offset == 30
    assert again.read_bytes(0, 1 << 20) == before


def test_config_is_validated() -> None:
    with pytest.raises(StoreConfigError):
        LogConfig(segment_bytes=10)
    with pytest.raises(StoreConfigError):
        LogConfig(flush_messages=0)
