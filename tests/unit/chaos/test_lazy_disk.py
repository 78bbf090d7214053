"""The power-cut file layer: what it keeps and what it takes back, and the faults it injects."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from lazy_disk_layer import install_lazy_disk

from rillet.chaos.lazy_disk import DiskFaults, LazyDisk
from rillet.wire import disk_io
from rillet.wire.atomic_file import fsync_dir, write_atomically


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LazyDisk:
    return install_lazy_disk(monkeypatch, tmp_path)


def _append(path: Path, data: bytes, sync: bool) -> None:
    fd = disk_io.open_fd(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        disk_io.write(fd, data)
        if sync:
            disk_io.fsync(fd)
    finally:
        disk_io.close(fd)


def test_a_power_cut_drops_what_was_written_after_the_last_fsync(
    disk: LazyDisk, tmp_path: Path
) -> None:
    f = tmp_path / "data" / "segment.log"
    _append(f, b"synced", sync=True)
    fsync_dir(f.parent)
    _append(f, b"+lost", sync=False)
    assert f.read_bytes() == b"synced+lost"
    disk.lose_unsynced()
    assert f.read_bytes() == b"synced"


def test_a_new_file_without_a_directory_fsync_disappears(disk: LazyDisk, tmp_path: Path) -> None:
    f = tmp_path / "data" / "new.log"
    _append(f, b"data", sync=True)  # the file's data is synced, its name is not
    disk.lose_unsynced()
    assert not f.exists()


def test_renames_and_unlinks_not_made_durable_are_undone(disk: LazyDisk, tmp_path: Path) -> None:
    data = tmp_path / "data"
    old, gone = data / "checkpoint", data / "gone"
    for path in (old, gone):
        _append(path, path.name.encode(), sync=True)
    fsync_dir(data)
    tmp = data / "checkpoint.tmp"
    _append(tmp, b"new", sync=True)
    disk_io.replace(tmp, old)
    disk_io.unlink(gone)
    assert old.read_bytes() == b"new" and not gone.exists()
    disk.lose_unsynced()
    assert old.read_bytes() == b"checkpoint"
    assert gone.read_bytes() == b"gone"
    assert not tmp.exists()  # created and never made durable


def test_an_atomic_write_is_durable_once_it_returns(disk: LazyDisk, tmp_path: Path) -> None:
    target = tmp_path / "data" / "meta"
    write_atomically(target, b"one")
    write_atomically(target, b"two")
    disk.lose_unsynced()
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["meta"]


def test_overwrites_and_truncations_below_the_synced_size_are_undone(
    disk: LazyDisk, tmp_path: Path
) -> None:
    f = tmp_path / "data" / "index"
    _append(f, b"0123456789", sync=True)
    fsync_dir(f.parent)
    fd = disk_io.open_fd(f, os.O_WRONLY)
    disk_io.pwrite(fd, b"ab", 2)
    disk_io.ftruncate(fd, 5)
    disk_io.pwrite(fd, b"XYZ", 5)
    disk_io.close(fd)
    disk_io.truncate(f, 3)
    disk.lose_unsynced()
    assert f.read_bytes() == b"0123456789"


def test_files_outside_the_data_directory_pass_through(disk: LazyDisk, tmp_path: Path) -> None:
    f = tmp_path / "other"
    _append(f, b"kept", sync=False)
    disk.lose_unsynced()
    assert f.read_bytes() == b"kept"


@pytest.mark.parametrize(
    ("faults", "code"),
    [(DiskFaults(eio_write="segment"), errno.EIO), (DiskFaults(enospc="segment"), errno.ENOSPC)],
)
def test_injected_write_errors(
    disk: LazyDisk, tmp_path: Path, faults: DiskFaults, code: int
) -> None:
    f = tmp_path / "data" / "segment.log"
    _append(f, b"before", sync=True)
    disk.faults = faults
    with pytest.raises(OSError) as raised:
        _append(f, b"after", sync=False)
    assert raised.value.errno == code
    _append(tmp_path / "data" / "other", b"fine", sync=True)  # other files are not hit
    disk.faults = DiskFaults()
    _append(f, b"+healed", sync=False)
    assert f.read_bytes() == b"before+healed"


def test_injected_read_errors(disk: LazyDisk, tmp_path: Path) -> None:
    f = tmp_path / "data" / "segment.log"
    _append(f, b"data", sync=True)
    disk.faults = DiskFaults(eio_read="segment")
    with pytest.raises(OSError) as raised:
        disk_io.read_file(f)
    assert raised.value.errno == errno.EIO
