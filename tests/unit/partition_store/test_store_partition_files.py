"""The small files beside the segments: atomic checkpoints, meta, clean-shutdown marker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rillet.partition_store.checkpoint import overwrite_int, read_int, write_atomically, write_int
from rillet.partition_store.errors import StoreError
from rillet.partition_store.partition_files import PartitionFiles, PartitionMeta
from rillet.wire import disk_io
from rillet.wire.atomic_file import SyncBatch


def test_atomic_writes_leave_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "recovery-point-checkpoint"
    write_int(path, 5)
    write_int(path, 6)
    assert path.read_text() == "6\n" and read_int(path) == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recovery-point-checkpoint"]
    write_atomically(path, b"garbage")
    assert read_int(path) is None
    assert read_int(tmp_path / "missing") is None


def test_writes_through_a_sync_batch_are_atomic_at_once_and_synced_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch writes each file whole (tmp + rename) without fsyncs of its own, then one
    file-system sync makes all of them durable: how thousands of new partitions open. The
    periodic high-watermark checkpoint is atomic and never fsynced."""
    fsyncs: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(disk_io, "fsync", lambda fd: (fsyncs.append(fd), real_fsync(fd))[1])
    batch = SyncBatch()
    assert not batch.pending
    for n in range(5):
        files = PartitionFiles(tmp_path / f"t-{n}")
        files.directory.mkdir()
        files.ensure_meta("t", n, 1_000, "id", batch)
        files.write_high_watermark(40 + n, durable=False)  # the periodic checkpoint
    assert fsyncs == [] and batch.pending
    batch.commit()  # syncfs of the file system (os.sync where syncfs is missing)
    assert not batch.pending
    for n in range(5):
        files = PartitionFiles(tmp_path / f"t-{n}")
        meta = files.read_meta()
        assert meta is not None and (meta.topic, meta.partition) == ("t", n)
        assert files.read_high_watermark() == 40 + n
        assert sorted(p.name for p in files.directory.iterdir() if p.name.endswith(".tmp")) == []
    write_int(tmp_path / "alone", 7)  # without a batch: fsynced file and directory
    assert len(fsyncs) == 2


def test_the_periodic_high_watermark_is_rewritten_in_place_whatever_it_held(
    tmp_path: Path,
) -> None:
    """No temp file, no new file: creating one per partition every two seconds cost 5 s
    of kernel CPU per round at 10,000 partitions. Any value overwrites any earlier one,
    including a shorter file an atomic write left."""
    path = tmp_path / "hw"
    write_int(path, 7)  # "7\n", as the durable write leaves it
    inode = os.stat(path).st_ino
    for value in (123_456_789, 5, 2**63 - 1, 0):
        overwrite_int(path, value)
        assert read_int(path) == value
    assert os.stat(path).st_ino == inode and os.listdir(tmp_path) == ["hw"]
    files = PartitionFiles(tmp_path)
    files.write_high_watermark(41, durable=False)
    assert files.read_high_watermark() == 41


def test_unreadable_checkpoints_fall_back_safely(tmp_path: Path) -> None:
    files = PartitionFiles(tmp_path)
    assert files.read_recovery_point() == 0  # absent: recover everything
    (tmp_path / "recovery-point-checkpoint").write_text("-3\n")
    assert files.read_recovery_point() == 0
    assert files.read_log_start_offset() is None
    files.write_log_start_offset(17)
    assert files.read_log_start_offset() == 17


def test_clean_shutdown_marker_records_segment_sizes_and_is_taken_once(tmp_path: Path) -> None:
    files = PartitionFiles(tmp_path)
    assert files.take_clean_shutdown() is None
    files.write_clean_shutdown({0: 1000, 50: 20})
    assert (tmp_path / "clean-shutdown").read_text().splitlines()[1:] == ["0 1000", "50 20"]
    assert files.take_clean_shutdown() == {0: 1000, 50: 20}
    assert files.take_clean_shutdown() is None
    (tmp_path / "clean-shutdown").write_text("rillet clean-shutdown v1\n0 x\n")
    assert files.take_clean_shutdown() is None
    assert not (tmp_path / "clean-shutdown").exists()


def test_partition_meta_round_trips_and_tolerates_new_fields() -> None:
    meta = PartitionMeta("orders", 3, 1234)
    assert PartitionMeta.decode(meta.encode()) == meta
    assert PartitionMeta.decode(meta.encode() + b"future_field=1\n") == meta
    assert PartitionMeta.decode(b"topic=orders\n") is None
    assert PartitionMeta.decode(b"\xff\xfe") is None


def test_topic_names_that_would_break_the_meta_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError):
        PartitionFiles(tmp_path).ensure_meta("a\nb", 0, 0)
