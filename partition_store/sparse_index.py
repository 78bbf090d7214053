"""Sparse indexes of a segment: fixed-size big-endian entries, in memory and appended to disk.

Two kinds, as in Kafka:

- :class:`OffsetIndex` — ``(relative offset uint32, byte position uint32)``: where the batch
  starting at that offset lies in the ``.log``. A read bisects it, then walks batch headers
  forward from the entry, so lookups cost one short scan instead of a scan of the segment.
- :class:`TimeIndex` — ``(timestamp int64, relative offset uint32)``: "the largest timestamp
  of the batches up to and including the one at this offset". A time lookup bisects it for
  the last entry *below* the wanted time; no batch up to that offset can match, so the
  header walk starts there.

In both, keys and values strictly increase. The entries live in ``array`` objects (compact,
bisectable) and are written to the file when a flush or a clean shutdown syncs them (see
:class:`_SparseIndex`), so an index survives a clean restart without being rebuilt. Index
files are derived data: when one fails a check here or in :mod:`segment`, the segment
rebuilds it from its ``.log``.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import operator
import os
import struct
from array import array
from pathlib import Path
from typing import ClassVar

from rillet.partition_store.errors import StoreError
from rillet.wire import disk_io
from rillet.wire.atomic_file import write_all

_U32 = "I" if array("I").itemsize == 4 else "L"
_I64 = "q"


class IndexCorrupt(StoreError):
    """An index file failed its sanity checks; the segment rebuilds it from the log."""


def _strictly_increasing(values: array[int]) -> bool:
    return all(map(operator.lt, values, itertools.islice(values, 1, None)))


class _SparseIndex:
    """Shared mechanics: two parallel arrays, bisection, and the file behind them.

    No descriptor stays open: a node hosts thousands of segments, and the process's limit
    on open files must go to the logs (one each) and connections. Entries are appended in
    memory and written to the file by :meth:`write_pending` — at every flush of a sealed
    segment (before the fsync) and at :meth:`sync`, which a clean shutdown runs for every
    segment — so the file holds every entry of sealed, flushed segments, and everything
    after a clean shutdown. Entries appended since the last
    flush are lost with the process; recovery rebuilds that part (it re-reads every batch
    after the recovery point, which is at most the last flush), and a lookup on a shorter
    index only walks further, since any entry is a valid starting point.
    """

    ENTRY: ClassVar[struct.Struct]
    KEY_TYPE: ClassVar[str]
    VALUE_TYPE: ClassVar[str]

    def __init__(self, path: Path, fresh: bool) -> None:
        """Use ``path``; ``fresh`` empties it (a new segment, or a rebuild to follow).

        The file is created by the first write of entries (:meth:`write_pending`), not
        here: a node creating thousands of partitions spent much of it creating files, and
        a new segment's indexes are first written at its first flush. A missing file is an
        empty index (derived data: the segment rebuilds what it lacks from its log).
        """
        self.path = path
        self.keys: array[int] = array(self.KEY_TYPE)
        self.values: array[int] = array(self.VALUE_TYPE)
        self._written = 0  # entries the file holds (the first ones of the arrays)
        if fresh:
            self.reset()

    def load(self) -> None:
        """Read the file into memory (none: empty); raise IndexCorrupt unless it is
        well-formed."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            data = b""
        size = len(data)
        if size % self.ENTRY.size:
            raise IndexCorrupt(f"{self.path.name}: {size} bytes is not a whole number of entries")
        keys: array[int] = array(self.KEY_TYPE)
        values: array[int] = array(self.VALUE_TYPE)
        if data:
            k, v = zip(*self.ENTRY.iter_unpack(data), strict=True)
            keys.extend(k)
            values.extend(v)
        if not (_strictly_increasing(keys) and _strictly_increasing(values)):
            raise IndexCorrupt(f"{self.path.name}: entries are not in increasing order")
        self.keys, self.values = keys, values
        self._written = len(keys)

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def pending(self) -> int:
        """Entries not in the file yet."""
        return len(self.keys) - self._written

    def append(self, key: int, value: int) -> None:
        self.keys.append(key)
        self.values.append(value)

    def truncate_entries(self, count: int) -> None:
        """Keep only the first ``count`` entries."""
        if count >= len(self.keys):
            return
        del self.keys[count:]
        del self.values[count:]
        if count < self._written:
            disk_io.truncate(self.path, count * self.ENTRY.size)
            self._written = count

    def reset(self) -> None:
        del self.keys[:]
        del self.values[:]
        with contextlib.suppress(FileNotFoundError):
            disk_io.truncate(self.path, 0)
        self._written = 0

    def write_pending(self) -> None:
        """Append the entries the file lacks (a few syscalls; none when it lacks nothing)."""
        if self._written == len(self.keys):
            return
        pack = self.ENTRY.pack
        data = b"".join(
            pack(k, v)
            for k, v in zip(self.keys[self._written :], self.values[self._written :], strict=True)
        )
        fd = disk_io.open_fd(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            write_all(fd, data)
        finally:
            disk_io.close(fd)
        self._written = len(self.keys)

    def dup_fd(self) -> int:
        """A descriptor for a flush running on another thread (which fsyncs and closes it),
        after the pending entries are written."""
        self.write_pending()
        return disk_io.open_fd(self.path, os.O_RDONLY | os.O_CREAT, 0o644)

    def sync(self) -> None:
        fd = self.dup_fd()
        try:
            disk_io.fsync(fd)
        finally:
            disk_io.close(fd)

    def close(self) -> None:
        """Nothing to release. Pending entries are not written here: a log released after
        its directory was renamed aside must not write at its old path (another log may
        live there by now); a clean shutdown syncs every index first (``sync``)."""

    def renamed(self, path: Path) -> None:
        """The file moved (deletion renames it first): later writes go there."""
        self.path = path


class OffsetIndex(_SparseIndex):
    ENTRY = struct.Struct(">II")
    KEY_TYPE = _U32
    VALUE_TYPE = _U32

    def lookup(self, relative_offset: int) -> tuple[int, int]:
        """``(relative offset, position)`` of the last entry at or below the offset.

        ``(0, 0)`` when there is none: the first batch of a segment is at position 0.
        """
        i = bisect.bisect_right(self.keys, relative_offset) - 1
        if i < 0:
            return 0, 0
        return self.keys[i], self.values[i]

    def count_below(self, relative_offset: int) -> int:
        """How many entries describe batches starting before ``relative_offset``."""
        return bisect.bisect_left(self.keys, relative_offset)

    def check(self, log_size: int) -> None:
        """Checks that need only the log's size; the segment verifies the last entry."""
        if log_size == 0:
            if self.keys:
                raise IndexCorrupt(f"{self.path.name}: entries for an empty log")
            return
        if not self.keys or self.keys[0] != 0 or self.values[0] != 0:
            raise IndexCorrupt(f"{self.path.name}: the first batch has no entry")
        if self.values[-1] >= log_size:
            raise IndexCorrupt(f"{self.path.name}: points past the end of the log")


class TimeIndex(_SparseIndex):
    ENTRY = struct.Struct(">qI")
    KEY_TYPE = _I64
    VALUE_TYPE = _U32

    def last_offset_below(self, timestamp_ms: int) -> int | None:
        """Relative offset of the last entry whose timestamp is below ``timestamp_ms``.

        No batch up to and including that offset has a timestamp at or after it.
        """
        i = bisect.bisect_left(self.keys, timestamp_ms) - 1
        return self.values[i] if i >= 0 else None

    def last_entry(self) -> tuple[int, int] | None:
        if not self.keys:
            return None
        return self.keys[-1], self.values[-1]

    def maybe_append(self, timestamp_ms: int, relative_offset: int) -> None:
        """Add an entry only if it raises the segment's largest timestamp."""
        if not self.keys or timestamp_ms > self.keys[-1]:
            self.append(timestamp_ms, relative_offset)

    def count_below(self, relative_offset: int) -> int:
        """How many entries point at batches starting before ``relative_offset``."""
        return bisect.bisect_left(self.values, relative_offset)
