"""Segments: rolling by size and time, lookups through the sparse indexes, time lookups."""

from __future__ import annotations

import fcntl
import itertools
import os
import random
from pathlib import Path

import pytest
from store_batches import T0, batch, open_log, records_of

from rillet.wire.batch import read_header


def test_segments_roll_by_size_and_are_named_by_base_offset(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_bytes=1024)
    for _ in range(30):
        log.append_as_leader(batch([bytes(100)]), 0, T0)
    infos = log.segments()
    assert len(infos) > 3 and all(s.size_bytes <= 1024 for s in infos)
    for prev, nxt in itertools.pairwise(infos):
        assert prev.next_offset == nxt.base_offset
    names = sorted(p.name for p in (tmp_path / "t-0").glob("*.log"))
    assert names == [f"{s.base_offset:020d}.log" for s in infos]
    assert infos[1].log_path.name == f"{infos[1].base_offset:020d}.log"
    assert not infos[1].index_path.exists()  # an index's file is created at its first flush
    log.flush()
    assert infos[1].index_path.exists() and infos[1].time_index_path.exists()


def test_a_batch_larger_than_a_segment_gets_a_segment_of_its_own(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_bytes=1024)
    log.append_as_leader(batch([b"small"]), 0, T0)
    log.append_as_leader(batch([bytes(3000)]), 0, T0)
    log.append_as_leader(batch([b"small"]), 0, T0)
    assert [s.base_offset for s in log.segments()] == [0, 1, 2]


def test_segments_roll_by_time_since_their_first_append(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_ms=1000)
    log.append_as_leader(batch([b"a"]), 0, T0)
    log.append_as_leader(batch([b"b"]), 0, T0 + 999)
    assert len(log.segments()) == 1
    log.append_as_leader(batch([b"c"]), 0, T0 + 1000)
    assert [s.base_offset for s in log.segments()] == [0, 2]
    log.append_as_leader(batch([b"d"]), 0, T0 + 1999)  # the clock restarted at T0 + 1000
    assert len(log.segments()) == 2
    log.append_as_leader(batch([b"e"]), 0, T0 + 2000)
    assert len(log.segments()) == 3


def test_the_roll_clock_survives_a_restart(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_ms=1000)
    log.append_as_leader(batch([b"a"], ts=T0), 0, T0)
    log.close()
    again = open_log(tmp_path / "t-0", now_ms=T0 + 500, segment_ms=1000)
    again.append_as_leader(batch([b"b"]), 0, T0 + 1000)  # 1000 ms after the first batch
    assert len(again.segments()) == 2


def test_explicit_roll_and_empty_roll(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.roll(T0)  # empty active segment: nothing to do
    assert len(log.segments()) == 1
    log.append_as_leader(batch([b"a"]), 0, T0)
    log.roll(T0)
    log.roll(T0)
    assert [s.base_offset for s in log.segments()] == [0, 1]
    log.append_as_leader(batch([b"b"]), 0, T0)
    assert records_of(log.read_bytes(0, 1000)) == [(0, b"a")]  # one segment per read
    assert records_of(log.read_bytes(1, 1000)) == [(1, b"b")]


def test_every_offset_is_found_across_many_segments(tmp_path: Path) -> None:
    rng = random.Random(7)
    log = open_log(tmp_path / "t-0", segment_bytes=4000, index_interval_bytes=500)
    starts = []
    for _ in range(300):
        n = rng.randint(1, 5)
        result = log.append_as_leader(batch([bytes(rng.randint(0, 120))] * n), 0, T0)
        starts.append(result.first_offset)
    assert len(log.segments()) > 5
    for offset in range(log.log_end_offset):
        base = max(s for s in starts if s <= offset)
        data = log.read_bytes(offset, 1)
        assert read_header(data).base_offset == base
        assert len(data) == read_header(data).size


def test_offset_index_is_sparse(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", index_interval_bytes=1000)
    for _ in range(100):
        log.append_as_leader(batch([bytes(100)]), 0, T0)
    entries = len(log.active_segment.index)
    assert 5 <= entries <= 20
    index_file = log.segments()[0].index_path
    log.close()  # the entries reach the file at a flush or at close
    assert index_file.stat().st_size == 8 * entries


def test_offset_for_timestamp_finds_the_first_batch_at_or_after(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_bytes=1024, index_interval_bytes=128)
    for i in range(40):
        log.append_as_leader(batch([bytes(50)], ts=T0 + 10 * i), 0, T0)
    assert len(log.segments()) > 2
    assert log.offset_for_timestamp(0) == (0, T0)
    assert log.offset_for_timestamp(T0) == (0, T0)
    assert log.offset_for_timestamp(T0 + 105) == (11, T0 + 110)
    assert log.offset_for_timestamp(T0 + 390) == (39, T0 + 390)
    assert log.offset_for_timestamp(T0 + 391) is None
    for t in range(0, 400, 13):
        assert log.offset_for_timestamp(T0 + t) == (-(-t // 10), T0 + 10 * -(-t // 10))


def test_offset_for_timestamp_with_unordered_timestamps(tmp_path: Path) -> None:
    rng = random.Random(3)
    log = open_log(tmp_path / "t-0", segment_bytes=2048, index_interval_bytes=200)
    stamps = [T0 + rng.randint(0, 1000) for _ in range(120)]
    for ts in stamps:
        log.append_as_leader(batch([bytes(30)], ts=ts), 0, T0)
    for target in range(T0 - 1, T0 + 1002, 37):
        expected = next(((i, ts) for i, ts in enumerate(stamps) if ts >= target), None)
        assert log.offset_for_timestamp(target) == expected
    log.close()
    again = open_log(tmp_path / "t-0", segment_bytes=2048, index_interval_bytes=200)
    assert again.recovery_stats.segments_recovered == 0
    for target in range(T0 - 1, T0 + 1002, 37):
        expected = next(((i, ts) for i, ts in enumerate(stamps) if ts >= target), None)
        assert again.offset_for_timestamp(target) == expected


def test_offset_for_timestamp_respects_the_log_start(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    for i in range(10):
        log.append_as_leader(batch([b"a", b"b"], ts=T0 + i), 0, T0)
    log.advance_log_start_offset(5)  # inside the batch [4, 5]
    assert log.offset_for_timestamp(T0) == (5, T0 + 2)
    assert log.offset_for_timestamp(T0 + 4) == (8, T0 + 4)


@pytest.mark.skipif(not hasattr(os, "O_NOATIME"), reason="no O_NOATIME on this platform")
def test_reading_a_segment_leaves_its_access_time_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Segment files are opened O_NOATIME (a read after an append would otherwise dirty the
    inode); where the kernel refuses the flag (a file owned by another user) they open
    without it."""
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(batch([b"v"]), 0, T0)
    path = log.segments()[0].log_path
    before = os.stat(path).st_atime_ns
    os.utime(path, ns=(before - 10**12, os.stat(path).st_mtime_ns))  # atime older than mtime
    older = os.stat(path).st_atime_ns
    assert records_of(log.read_bytes(0, 1 << 20)) == [(0, b"v")]
    assert os.stat(path).st_atime_ns == older
    log.close()

    real_fcntl = fcntl.fcntl

    def refuse_noatime(fd: int, cmd: int, arg: int = 0) -> int:
        if cmd == fcntl.F_SETFL and arg & os.O_NOATIME:
            raise PermissionError(1, "Operation not permitted")
        return real_fcntl(fd, cmd, arg)

    monkeypatch.setattr(fcntl, "fcntl", refuse_noatime)
    reopened = open_log(tmp_path / "t-0")
    assert records_of(reopened.read_bytes(0, 1 << 20)) == [(0, b"v")]
    reopened.close()
