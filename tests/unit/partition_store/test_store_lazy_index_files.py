"""A segment's index files are created at their first write (a flush or a clean close), not
with the segment: creating thousands of partitions costs two files fewer each. A missing
index file is an empty index, rebuilt from the log when the log has batches."""

from __future__ import annotations

from pathlib import Path

from store_batches import T0, batch, crash, open_log, records_of


def _index_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.suffix in (".index", ".timeindex"))


def test_a_new_log_creates_no_index_files_until_they_are_written(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory)
    log.append_as_leader(batch([b"a", b"b"]), 1, T0)
    log.flush()  # the active segment's indexes are written when it is sealed or closed
    assert _index_files(directory) == []
    log.close()
    assert _index_files(directory) == [
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
    ]


def test_an_empty_log_reopens_without_index_files(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    open_log(directory).close()
    log = open_log(directory)
    assert (log.log_start_offset, log.log_end_offset) == (0, 0)
    log.append_as_leader(batch([b"x"]), 1, T0)
    assert records_of(log.read_bytes(0, 1 << 20)) == [(0, b"x")]
    log.close()


def test_a_crash_before_any_flush_rebuilds_the_indexes_from_the_log(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory, segment_bytes=1024)
    for i in range(30):
        log.append_as_leader(batch([bytes([i]) * 100], ts=T0 + i), 1, T0)
    crash(log)  # sealed segments were never flushed: no index files
    log = open_log(directory, segment_bytes=1024)
    assert log.log_end_offset == 30
    assert [o for o, _ in records_of(log.read_bytes(17, 1 << 20))][:1] == [17]
    assert log.offset_for_timestamp(T0 + 20) is not None
    log.close()
    assert _index_files(directory)  # written at the clean close


def test_a_deleted_segment_never_writes_an_index_under_its_old_name(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = open_log(directory, segment_bytes=1024, retention_bytes=1024, file_delete_delay_ms=60_000)
    for _ in range(30):
        log.append_as_leader(batch([bytes(100)]), 1, T0)
    first = log._segments.first
    assert log.delete_expired_segments(T0) > 0
    first.index.write_pending()  # a late write of the deleted segment's entries
    first.time_index.write_pending()
    assert not (directory / "00000000000000000000.index").exists()
    assert not (directory / "00000000000000000000.timeindex").exists()
    log.close()
