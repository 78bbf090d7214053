"""Truncation for replication: cut a suffix at a batch boundary, or restart the log elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_batches import T0, batch, open_log, records_of

from rillet.partition_store.errors import InvalidTruncation, OffsetOutOfRange
from rillet.wire.batch import assign_offset_and_epoch


def test_truncate_within_the_active_segment(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    for i in range(5):
        log.append_as_leader(batch([b"%d" % i, b"x"], ts=T0 + i), i, T0)
    with pytest.raises(InvalidTruncation):
        log.truncate_to(5)  # inside a batch
    with pytest.raises(InvalidTruncation):
        log.truncate_to(11)  # beyond the end
    log.truncate_to(10)  # the log end: nothing to do
    log.truncate_to(6)
    assert (log.log_end_offset, log.latest_epoch) == (6, 2)
    assert [o for o, _ in records_of(log.read_bytes(0, 1 << 20))] == list(range(6))
    assert log.offset_for_timestamp(T0 + 3) is None
    assert log.segments()[0].max_timestamp_ms == T0 + 2
    with pytest.raises(OffsetOutOfRange):
        log.read(7, 100)
    result = log.append_as_leader(batch([b"new"]), 5, T0)
    assert result.first_offset == 6
    assert records_of(log.read_bytes(6, 100)) == [(6, b"new")]


def test_truncate_across_segments_deletes_the_later_ones(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory, segment_bytes=1024, index_interval_bytes=100)
    for i in range(60):
        log.append_as_leader(batch([bytes(60)], ts=T0 + i), 0, T0)
    segments = log.segments()
    assert len(segments) >= 4
    target = segments[1].base_offset + 3
    log.truncate_to(target)
    assert log.log_end_offset == target
    assert [s.base_offset for s in log.segments()] == [s.base_offset for s in segments[:2]]
    assert len(list(directory.glob("*.log"))) == 2
    assert log.offset_for_timestamp(T0 + target - 1) == (target - 1, T0 + target - 1)
    assert log.offset_for_timestamp(T0 + target) is None
    for i in range(30):  # the next segments reuse the deleted segments' base offsets
        log.append_as_leader(batch([bytes(60)], ts=T0 + 100 + i), 0, T0)
    assert [o for o, _ in records_of(log.read_bytes(target - 1, 1 << 20))][:2] == [
        target - 1,
        target,
    ]
    log.close()
    again = open_log(directory, segment_bytes=1024, index_interval_bytes=100)
    assert again.log_end_offset == target + 30
    assert again.recovery_stats.segments_recovered == 0


def test_truncate_to_a_segment_base_leaves_it_empty(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(batch([b"a"]), 0, T0)
    log.roll(T0)
    log.append_as_leader(batch([b"b"]), 0, T0)
    log.truncate_to(1)
    assert [(s.base_offset, s.size_bytes) for s in log.segments()][-1] == (1, 0)
    log.truncate_to(0)
    assert log.log_end_offset == 0 and log.size_bytes == 0
    log.append_as_leader(batch([b"c"]), 0, T0)
    assert records_of(log.read_bytes(0, 100)) == [(0, b"c")]


def test_truncation_below_the_recovery_point_lowers_it(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory)
    for _ in range(4):
        log.append_as_leader(batch([b"a"]), 0, T0)
    log.flush()
    assert log.recovery_point == 4
    log.truncate_to(2)
    assert log.recovery_point == 2
    assert (directory / "recovery-point-checkpoint").read_text() == "2\n"


def test_truncation_below_the_log_start_is_refused(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    for _ in range(4):
        log.append_as_leader(batch([b"a"]), 0, T0)
    log.advance_log_start_offset(2)
    with pytest.raises(InvalidTruncation):
        log.truncate_to(1)


def test_truncate_fully_and_start_elsewhere(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory, segment_bytes=1024, file_delete_delay_ms=0)
    for _ in range(30):
        log.append_as_leader(batch([bytes(100)]), 3, T0)
    log.truncate_fully_and_start_at(1000)
    assert (log.log_start_offset, log.log_end_offset, log.recovery_point) == (1000, 1000, 1000)
    assert log.latest_epoch == -1
    assert [s.base_offset for s in log.segments()] == [1000]
    log.delete_expired_segments(T0)  # finishes the deferred deletions
    assert sorted(p.name for p in directory.glob("*.log")) == ["00000000000000001000.log"]
    replicated = bytearray(batch([b"replicated"]))
    assign_offset_and_epoch(replicated, 0, 1000, 4)  # as a leader would have
    log.append_as_follower(replicated, T0)
    assert log.log_end_offset == 1001
    log.close()
    again = open_log(directory, segment_bytes=1024)
    assert (again.log_start_offset, again.log_end_offset) == (1000, 1001)
