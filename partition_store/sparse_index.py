"""A sparse index file of fixed-size entries kept in memory and appended to disk.

Both the offset index and the time index are this structure with different entries. Index
files are derived data: when one is missing, damaged or inconsistent with its log, the segment
rebuilds it from the ``.log`` (see :mod:`rillet.partition_store.segment`).
"""

from __future__ import annotations

import bisect
import os
import struct
from pathlib import Path

from rillet.partition_store.errors import StoreError


class IndexCorrupt(StoreError):
    """An index file failed its sanity checks; the segment rebuilds it."""


class SparseIndex:
    """Entries ``(key, value)`` with strictly increasing keys and non-decreasing values."""

    def __init__(self, path: Path, entry: struct.Struct, strict_values: bool) -> None:
        self.path = path
        self._entry = entry
        self._strict_values = strict_values
        self.keys: list[int] = []
        self.values: list[int] = []
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)

    def load(self) -> None:
        """Read the file; raises IndexCorrupt when it is not a valid index."""
        size = os.fstat(self._fd).st_size
        if size % self._entry.size:
            raise IndexCorrupt(f"{self.path.name}: size {size} is not a multiple of entries")
        data = os.pread(self._fd, size, 0)
        keys: list[int] = []
        values: list[int] = []
        for key, value in self._entry.iter_unpack(data):
            if keys and (key <= keys[-1] or value < values[-1]):
                raise IndexCorrupt(f"{self.path.name}: entries out of order")
            if self._strict_values and values and value <= values[-1]:
                raise IndexCorrupt(f"{self.path.name}: positions not increasing")
            keys.append(key)
            values.append(value)
        self.keys, self.values = keys, values

    def __len__(self) -> int:
        return len(self.keys)

    def append(self, key: int, value: int) -> None:
        os.write(self._fd, self._entry.pack(key, value))
        self.keys.append(key)
        self.values.append(value)

    def floor(self, key: int) -> int:
        """Index of the last entry with key <= ``key``, or -1."""
        return bisect.bisect_right(self.keys, key) - 1

    def last_below(self, key: int) -> int:
        """Index of the last entry with key < ``key``, or -1."""
        return bisect.bisect_left(self.keys, key) - 1

    def truncate_entries(self, count: int) -> None:
        """Keep only the first ``count`` entries."""
        if count >= len(self.keys):
            return
        del self.keys[count:]
        del self.values[count:]
        os.ftruncate(self._fd, count * self._entry.size)

    def reset(self) -> None:
        self.truncate_entries(0)

    def sync(self) -> None:
        os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


OFFSET_ENTRY = struct.Struct(">II")  # relative offset, byte position in the .log
TIME_ENTRY = struct.Struct(">qI")  # max timestamp so far, relative offset of that batch


def open_offset_index(path: Path) -> SparseIndex:
    return SparseIndex(path, OFFSET_ENTRY, strict_values=True)


def open_time_index(path: Path) -> SparseIndex:
    return SparseIndex(path, TIME_ENTRY, strict_values=False)
