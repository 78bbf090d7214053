"""Opening a log: clean restarts skip re-validation, crashes re-validate from the recovery
point, damage cuts the log at the first bad batch, stray files are cleaned up."""

from __future__ import annotations

import os
from pathlib import Path

from store_batches import T0, batch, crash, open_log, records_of

from rillet.partition_store.log import PartitionLog

SEGMENT = {"segment_bytes": 1024, "index_interval_bytes": 200}


def write(directory: Path, count: int, **config: int) -> PartitionLog:
    log = open_log(directory, **{**SEGMENT, **config})
    for i in range(count):
        log.append_as_leader(batch([b"v%d" % i, bytes(60)], ts=T0 + i), 0, T0)
    return log


def test_clean_reopen_does_not_rescan(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = write(directory, 40)
    before = log.read_bytes(0, 1 << 20)
    segments = log.segments()
    log.close()
    assert (directory / "clean-shutdown").exists()
    again = open_log(directory, **SEGMENT)
    stats = again.recovery_stats
    assert stats.clean_shutdown
    assert stats.segments_trusted == stats.segments_loaded == len(segments)
    assert (stats.segments_recovered, stats.batches_validated, stats.indexes_rebuilt) == (0, 0, 0)
    assert not (directory / "clean-shutdown").exists()  # removed on open, until next close
    assert again.log_end_offset == 80 and again.read_bytes(0, 1 << 20) == before
    assert again.segments() == segments


def test_crash_revalidates_only_from_the_recovery_point(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = write(directory, 40)
    log.flush()
    flushed = log.segments()
    for i in range(10):
        log.append_as_leader(batch([b"late%d" % i]), 0, T0)
    crash(log)
    again = open_log(directory, **SEGMENT)
    stats = again.recovery_stats
    assert not stats.clean_shutdown
    assert stats.segments_trusted == len(flushed) - 1  # all but the one holding the point
    assert stats.segments_recovered == len(again.segments()) - stats.segments_trusted
    assert stats.bytes_truncated == 0
    assert again.log_end_offset == 90 and again.recovery_point == 80


def test_torn_tail_is_cut_and_appends_continue(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = write(directory, 3)
    crash(log)
    path = directory / "00000000000000000000.log"
    os.truncate(path, path.stat().st_size - 5)
    again = open_log(directory, **SEGMENT)
    assert again.log_end_offset == 4
    assert again.recovery_stats.bytes_truncated > 0
    assert again.append_as_leader(batch([b"next"]), 0, T0).first_offset == 4
    assert records_of(again.read_bytes(4, 100)) == [(4, b"next")]


def test_corruption_in_a_middle_segment_drops_everything_after_it(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = write(directory, 60)
    segments = log.segments()
    victim = segments[2]
    third_batch = log.read(victim.base_offset + 4, 1).region
    assert third_batch is not None
    crash(log)
    with open(victim.log_path, "r+b") as f:  # a bit flip inside the third batch's payload
        f.seek(third_batch.position + third_batch.length - 3)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0x10]))
    again = open_log(directory, **SEGMENT)
    assert again.log_end_offset == victim.base_offset + 4
    assert [s.base_offset for s in again.segments()] == [s.base_offset for s in segments[:3]]
    assert again.recovery_stats.segments_deleted == len(segments) - 3
    assert not segments[3].log_path.exists() and not segments[3].index_path.exists()


def test_a_missing_segment_breaks_the_chain(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = write(directory, 60)
    segments = log.segments()
    log.close()
    segments[1].log_path.unlink()
    again = open_log(directory, **SEGMENT)
    assert again.log_end_offset == segments[0].next_offset
    assert [s.base_offset for s in again.segments()] == [0]


def test_a_tail_changed_while_down_is_noticed_despite_a_clean_shutdown(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = write(directory, 40)
    last = log.segments()[-1]
    log.close()
    with open(last.log_path, "ab") as f:
        f.write(b"\x00" * 30)  # e.g. a nemesis appending garbage to a stopped node's log
    again = open_log(directory, **SEGMENT)
    assert again.recovery_stats.clean_shutdown
    assert again.recovery_stats.segments_recovered == 1
    assert again.recovery_stats.bytes_truncated == 30
    assert again.log_end_offset == 80


def test_an_unreadable_clean_shutdown_marker_means_a_crash(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    write(directory, 5).close()
    (directory / "clean-shutdown").write_text("something else\n")
    again = open_log(directory, **SEGMENT)
    assert not again.recovery_stats.clean_shutdown
    assert again.log_end_offset == 10


def test_a_lowered_epoch_is_corruption(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory)
    for epoch in (0, 2, 2, 5):
        log.append_as_leader(batch([b"x" * 10]), epoch, T0)
    third = log.read(2, 1).region
    assert third is not None
    crash(log)
    with open(directory / f"{0:020d}.log", "r+b") as f:  # the third batch's epoch: 2 -> 1
        f.seek(third.position + 12)
        f.write((1).to_bytes(4, "big"))
    again = open_log(directory)
    assert again.log_end_offset == 2 and again.latest_epoch == 2


def test_lowering_max_batch_bytes_never_loses_data_on_recovery(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory)
    log.append_as_leader(batch([bytes(5000)]), 0, T0)
    crash(log)
    again = open_log(directory, max_batch_bytes=1000)
    assert again.log_end_offset == 1


def test_stray_files_are_removed(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    write(directory, 5).close()
    strays = [
        "recovery-point-checkpoint.7.tmp",
        "partition.meta.tmp",
        "00000000000000000500.index",  # an index without its log
        "00000000000000000500.timeindex",
        "00000000000000000000.log.deleted",
    ]
    for name in strays:
        (directory / name).write_bytes(b"x")
    (directory / "notes.txt").write_text("an operator's file is left alone")
    again = open_log(directory, **SEGMENT)
    assert again.recovery_stats.stray_files_removed == len(strays)
    assert not any((directory / name).exists() for name in strays)
    assert (directory / "notes.txt").exists()
    assert again.log_end_offset == 10


def test_an_empty_directory_starts_at_the_checkpointed_log_start(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    directory.mkdir()
    (directory / "log-start-offset-checkpoint").write_text("42\n")
    log = open_log(directory)
    assert (log.log_start_offset, log.log_end_offset) == (42, 42)
    assert log.append_as_leader(batch([b"a"]), 0, T0).first_offset == 42


def test_deleting_a_log_removes_its_directory(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = write(directory, 5)
    log.delete()
    assert not directory.exists()
