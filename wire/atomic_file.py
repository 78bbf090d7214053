"""Small files replaced atomically and durably: write a temp file, fsync it, rename it over
the target, fsync the directory. A crash leaves either the old or the new content, never a
mix, and after :func:`write_atomically` returns a crash shows the new content.

The one file primitive in this otherwise sans-I/O package, kept here because wire is the
only package every layer may import (the partition store, the Raft log, the broker and the
Spark job's offset files all use it) and it needs nothing but the standard library. The
halves are separate functions because a partition flush writes and fsyncs the temp file on
a worker thread and renames it on the event loop only once it knows the new value is still
right (no truncation happened meanwhile).

:class:`SyncBatch` trades many fsyncs for one: thousands of new partitions each write a small
file, and two fsyncs apiece (file and directory) made creating a 10,000-partition topic spend
most of its time waiting for the disk. Writes through a batch are atomic at once and durable
once :meth:`SyncBatch.commit` returns (one ``syncfs`` of the file system).
"""

from __future__ import annotations

import os
from pathlib import Path

from rillet.wire import disk_io

# What a file being written is called until it is renamed over its target.
TMP_SUFFIX = ".tmp"


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` at ``fd``'s position (``os.write`` may write less)."""
    view = memoryview(data)
    while view:
        view = view[disk_io.write(fd, view) :]


def write_synced(path: Path, data: bytes, dir_fd: int | None = None) -> None:
    """Create or replace ``path`` with ``data`` and fsync the file (not its directory).

    With ``dir_fd``, ``path.name`` is created in that open directory instead, so a writer on
    another thread never depends on the directory's current name.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    if dir_fd is None:
        fd = disk_io.open_fd(path, flags, 0o644)
    else:
        fd = disk_io.open_fd(path.name, flags, 0o644, dir_fd=dir_fd)
    try:
        write_all(fd, data)
        disk_io.fsync(fd)
    finally:
        disk_io.close(fd)


def fsync_dir(directory: Path) -> None:
    """Make renames, creations and unlinks in ``directory`` durable."""
    fd = disk_io.open_fd(directory, os.O_RDONLY)
    try:
        disk_io.fsync(fd)
    finally:
        disk_io.close(fd)


def write_atomically(
    path: Path, data: bytes, tmp_path: Path | None = None, batch: SyncBatch | None = None
) -> None:
    """Replace ``path`` durably with ``data``, through ``tmp_path`` (default: ``path`` plus
    :data:`TMP_SUFFIX`, in the same directory: a rename never crosses file systems). With
    ``batch``, the replacement is atomic now and durable once the batch commits."""
    tmp = tmp_path if tmp_path is not None else path.with_name(path.name + TMP_SUFFIX)
    if batch is None:
        write_synced(tmp, data)
    else:
        _write_unsynced(tmp, data)
        batch.note(path.parent)
    disk_io.replace(tmp, path)
    if batch is None:
        fsync_dir(path.parent)


def replace_unsynced(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically but not durably (no fsync): after a power
    failure it may hold the old content or none. Only for hints whose loss or age is safe."""
    tmp = path.with_name(path.name + TMP_SUFFIX)
    _write_unsynced(tmp, data)
    disk_io.replace(tmp, path)


def _write_unsynced(path: Path, data: bytes) -> None:
    fd = disk_io.open_fd(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        write_all(fd, data)
    finally:
        disk_io.close(fd)


class SyncBatch:
    """Small-file writes made durable together, by one sync of their file system.

    Blocking, like the writes themselves: use one per worker-thread call, and rely on
    nothing written through it (serve it, acknowledge it) before :meth:`commit` returns.
    """

    def __init__(self) -> None:
        self._directory: Path | None = None  # any directory written in: names the file system

    @property
    def pending(self) -> bool:
        return self._directory is not None

    def note(self, directory: Path) -> None:
        if self._directory is None:
            self._directory = directory

    def commit(self) -> None:
        """Make every write through this batch durable (raises OSError if the sync fails).

        One ``syncfs`` of the file system written to (all of its dirty data, so also any
        other file's: the cost of one journal commit instead of two fsyncs per file);
        ``os.sync`` where ``syncfs`` is missing. Batched files all live under one data
        directory, hence on one file system.
        """
        directory, self._directory = self._directory, None
        if directory is None:
            return
        fd = disk_io.open_fd(directory, os.O_RDONLY)
        try:
            disk_io.syncfs(fd)
        finally:
            disk_io.close(fd)
