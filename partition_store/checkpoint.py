"""Integer checkpoints (recovery point, log start offset): one decimal line, replaced
atomically and durably through :mod:`rillet.wire.atomic_file`."""

from __future__ import annotations

import os
from pathlib import Path

from rillet.wire import disk_io
from rillet.wire.atomic_file import SyncBatch, write_atomically

__all__ = ["encode_int", "overwrite_int", "read_int", "write_atomically", "write_int"]


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


# Characters an integer checkpoint rewritten in place takes, before its newline: room for
# any offset (2**63 - 1 has 19 digits), so every rewrite covers the whole previous value.
OVERWRITE_WIDTH = 20


def overwrite_int(path: Path, value: int) -> None:
    """Rewrite an integer checkpoint in place: one write of a fixed-width line at the start
    of the file (created if missing), no temp file, no fsync.

    For checkpoints rewritten every few seconds whose loss is safe (the high watermark).
    Replacing such a file through a temp file creates a new file each time, which costs
    about 0.5 ms of kernel CPU on a virtual machine: 5 s every round at 10,000 partitions,
    against 12 µs for this. A 21-byte write at offset 0 lands in one sector: after a crash
    the file holds the old value, the new one, or (a torn sector, where the device does
    not write one whole) something :func:`read_int` rejects, which counts as absent.
    """
    data = f"{value:<{OVERWRITE_WIDTH}}\n".encode("ascii")
    fd = disk_io.open_fd(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        if disk_io.pwrite(fd, data, 0) != len(data):
            raise OSError(f"short write of {path}")
    finally:
        disk_io.close(fd)


def write_int(path: Path, value: int, batch: SyncBatch | None = None) -> None:
    """Durable at once, or when ``batch`` commits."""
    write_atomically(path, encode_int(value), batch=batch)
