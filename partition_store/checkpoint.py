"""Integer checkpoints (recovery point, log start offset): one decimal line, replaced
atomically and durably through :mod:`rillet.wire.atomic_file`."""

from __future__ import annotations

from pathlib import Path

from rillet.wire.atomic_file import SyncBatch, write_atomically

__all__ = ["encode_int", "read_int", "write_atomically", "write_int"]


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


def write_int(path: Path, value: int, batch: SyncBatch | None = None) -> None:
    """Durable at once, or when ``batch`` commits."""
    write_atomically(path, encode_int(value), batch=batch)
