"""Small files written atomically: temp file, fsync, rename, fsync of the directory.

A crash leaves either the old or the new content, never a mix.
"""

from __future__ import annotations

import os
from pathlib import Path


def write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_int(path: Path) -> int | None:
    """An integer checkpoint, or None if absent or unreadable (then recovery is the fallback)."""
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def write_int(path: Path, value: int) -> None:
    write_atomically(path, f"{value}\n".encode())
