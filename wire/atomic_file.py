"""Small files replaced atomically and durably: write a temp file, fsync it, rename it over
the target, fsync the directory. A crash leaves either the old or the new content, never a
mix, and after :func:`write_atomically` returns a crash shows the new content.

The one file primitive in this otherwise sans-I/O package, kept here because wire is the
only package every layer may import (the partition store, the Raft log, the broker and the
Spark job's offset files all use it) and it needs nothing but the standard library. The
halves are separate functions because a partition flush writes and fsyncs the temp file on
a worker thread and renames it on the event loop only once it knows the new value is still
right (no truncation happened meanwhile).
"""

from __future__ import annotations

import os
from pathlib import Path

# What a file being written is called until it is renamed over its target.
TMP_SUFFIX = ".tmp"


def write_synced(path: Path, data: bytes, dir_fd: int | None = None) -> None:
    """Create or replace ``path`` with ``data`` and fsync the file (not its directory).

    With ``dir_fd``, ``path.name`` is created in that open directory instead, so a writer on
    another thread never depends on the directory's current name.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    if dir_fd is None:
        fd = os.open(path, flags, 0o644)
    else:
        fd = os.open(path.name, flags, 0o644, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(directory: Path) -> None:
    """Make renames, creations and unlinks in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, data: bytes, tmp_path: Path | None = None) -> None:
    """Replace ``path`` durably with ``data``, through ``tmp_path`` (default: ``path`` plus
    :data:`TMP_SUFFIX`, in the same directory: a rename never crosses file systems)."""
    tmp = tmp_path if tmp_path is not None else path.with_name(path.name + TMP_SUFFIX)
    write_synced(tmp, data)
    os.replace(tmp, path)
    fsync_dir(path.parent)
