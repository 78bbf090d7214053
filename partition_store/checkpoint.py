"""Small files replaced atomically: write a temp file, fsync it, rename it, fsync the directory.

A crash leaves either the old or the new content, never a mix. The two halves are separate
functions because a flush writes and fsyncs the temp file on a worker thread
(:mod:`flush_plan`) and renames it on the event loop only once it knows the new value is
still right (no truncation happened meanwhile).
"""

from __future__ import annotations

import os
from pathlib import Path

from rillet.partition_store.layout import TMP_SUFFIX


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


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` durably: after return, a crash shows the new content."""
    tmp = path.with_name(path.name + TMP_SUFFIX)
    write_synced(tmp, data)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def read_int(path: Path) -> int | None:
    """An integer checkpoint, or None if absent or unreadable.

    Every integer checkpoint has a safe fallback (more recovery, or the first segment's base
    offset), so a damaged one is ignored rather than fatal.
    """
    try:
        return int(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def encode_int(value: int) -> bytes:
    return f"{value}\n".encode("ascii")


def write_int(path: Path, value: int) -> None:
    write_atomically(path, encode_int(value))
