"""Disk faults under the stores (EIO, a full disk, a slow fsync), injected through the chaos
harness's file layer: each store fails the operation with an error and never keeps, serves
or acknowledges bytes the disk did not take. What the node does then (stop, one line) is in
docs/guarantees.md."""

from __future__ import annotations

import errno
import time
from pathlib import Path

import pytest
from lazy_disk_layer import install_lazy_disk
from store_batches import T0, batch, crash, open_log, records_of
from test_store_compaction import compacted, latest_per_key, read_all, write

from rillet.chaos.lazy_disk import DiskFaults, LazyDisk
from rillet.partition_store.cleaning_pass import clean_now
from rillet.raft.durable_log import DurableLog, StorageError, StorageFull
from rillet.raft.messages import LogEntry


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LazyDisk:
    return install_lazy_disk(monkeypatch, tmp_path)


def _errno(raised: pytest.ExceptionInfo[BaseException]) -> int | None:
    exc: BaseException | None = raised.value
    while exc is not None and not isinstance(exc, OSError):
        exc = exc.__cause__
    return exc.errno if isinstance(exc, OSError) else None


@pytest.mark.parametrize("fault", ["eio_write", "enospc"])
def test_a_failed_segment_write_fails_the_append_and_keeps_the_log_whole(
    disk: LazyDisk, tmp_path: Path, fault: str
) -> None:
    log = open_log(tmp_path / "data" / "t-0")
    log.start_leader_epoch(1)
    log.append_as_leader(batch([b"a", b"b"]), 1, T0)
    disk.faults = DiskFaults(**{fault: "/t-0/"})
    with pytest.raises(OSError) as raised:
        log.append_as_leader(batch([b"lost"]), 1, T0)
    assert raised.value.errno == (errno.EIO if fault == "eio_write" else errno.ENOSPC)
    assert log.log_end_offset == 2
    disk.faults = DiskFaults()
    log.append_as_leader(batch([b"c"]), 1, T0)
    assert records_of(log.read_bytes(0, 1 << 20)) == [(0, b"a"), (1, b"b"), (2, b"c")]
    log.close()


def test_a_failed_segment_read_raises_instead_of_serving_bytes(
    disk: LazyDisk, tmp_path: Path
) -> None:
    log = open_log(tmp_path / "data" / "t-0")
    log.start_leader_epoch(1)
    log.append_as_leader(batch([b"a"]), 1, T0)
    disk.faults = DiskFaults(eio_read="/t-0/")
    with pytest.raises(OSError) as raised:
        log.read_bytes(0, 1 << 20)
    assert raised.value.errno == errno.EIO
    disk.faults = DiskFaults()
    log.close()


def test_a_full_disk_during_recovery_refuses_to_open_the_log(
    disk: LazyDisk, tmp_path: Path
) -> None:
    directory = tmp_path / "data" / "t-0"
    log = open_log(directory, segment_bytes=1_000, index_interval_bytes=64)
    log.start_leader_epoch(1)
    for i in range(40):
        log.append_as_leader(batch([b"v%03d" % i] * 4), 1, T0)
    crash(log)  # no clean-shutdown marker: the next open re-validates and rewrites indexes
    for index in directory.glob("*.index"):
        index.unlink()
    disk.faults = DiskFaults(enospc="/t-0/")
    with pytest.raises(OSError) as raised:
        open_log(directory, segment_bytes=1_000, index_interval_bytes=64)
    assert raised.value.errno == errno.ENOSPC
    disk.faults = DiskFaults()
    log = open_log(directory, segment_bytes=1_000, index_interval_bytes=64)
    assert log.log_end_offset == 160
    log.close()


def test_a_full_disk_during_compaction_keeps_the_old_segments(
    disk: LazyDisk, tmp_path: Path
) -> None:
    log = compacted(tmp_path / "data" / "t-0")
    write(log, 0, 300)
    before = read_all(log)
    disk.faults = DiskFaults(enospc="/t-0/")
    with pytest.raises(OSError) as raised:
        clean_now(log, T0 + 1000)
    assert _errno(raised) == errno.ENOSPC
    disk.faults = DiskFaults()
    assert read_all(log) == before
    assert clean_now(log, T0 + 1000) is not None  # once there is room again it cleans
    assert latest_per_key(read_all(log)) == latest_per_key(before)
    log.close()


@pytest.mark.parametrize(("fault", "error"), [("eio_write", StorageError), ("enospc", StorageFull)])
def test_a_failed_raft_log_write_is_a_storage_error_and_keeps_what_was_synced(
    disk: LazyDisk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str, error: type
) -> None:
    directory = tmp_path / "data" / "raft"
    log = DurableLog.open(directory)
    log.append([LogEntry(i, 1, b"x" * 100) for i in range(1, 11)])
    log.sync()
    disk.faults = DiskFaults(**{fault: "/raft/"})
    with pytest.raises(error):
        log.append([LogEntry(11, 1, b"y" * 100)])
    disk.lose_unsynced()
    monkeypatch.undo()
    log = DurableLog.open(directory)
    assert log.last_index() == 10
    log.close()


def test_a_slow_fsync_delays_the_flush_and_completes_it(disk: LazyDisk, tmp_path: Path) -> None:
    log = open_log(tmp_path / "data" / "t-0")
    log.start_leader_epoch(1)
    log.append_as_leader(batch([b"a"]), 1, T0)
    disk.faults = DiskFaults(slow_fsync_ms=100)
    started = time.monotonic()
    log.flush()
    assert time.monotonic() - started >= 0.1
    assert log.recovery_point == 1
    log.close()
