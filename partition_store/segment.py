"""One log segment: a ``.log`` file of whole batches plus its offset and time indexes.

The ``.log`` is the truth; both indexes are sparse accelerators rebuilt from it whenever they
look wrong. Reads locate batches by reading only their fixed headers (``pread`` of 61 bytes),
never their records.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rillet.partition_store.errors import InvalidTruncation
from rillet.partition_store.sparse_index import (
    IndexCorrupt,
    open_offset_index,
    open_time_index,
)
from rillet.wire.batch import HEADER_SIZE, BatchHeader, check_batch, read_header
from rillet.wire.errors import CorruptBatch

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
DELETED_SUFFIX = ".deleted"
_RECOVERY_CHUNK_BYTES = 4 * 1024 * 1024


def segment_name(base_offset: int) -> str:
    return f"{base_offset:020d}"


@dataclass(frozen=True, slots=True)
class BatchPosition:
    """Where one appended batch went, for index maintenance."""

    position: int
    base_offset: int
    next_offset: int
    max_timestamp_ms: int


@dataclass(frozen=True, slots=True)
class SegmentInfo:
    base_offset: int
    next_offset: int
    size_bytes: int
    log_path: Path
    max_timestamp_ms: int


class LogSegment:
    """A segment file and its indexes. Not thread-safe: owned by one event loop."""

    def __init__(self, directory: Path, base_offset: int, index_interval_bytes: int) -> None:
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        stem = segment_name(base_offset)
        self.log_path = directory / (stem + LOG_SUFFIX)
        self.fd = os.open(self.log_path, os.O_RDWR | os.O_CREAT, 0o644)
        self.size = os.fstat(self.fd).st_size
        self.index = open_offset_index(directory / (stem + INDEX_SUFFIX))
        self.time_index = open_time_index(directory / (stem + TIME_INDEX_SUFFIX))
        self.next_offset = base_offset
        self.max_timestamp_ms = -1
        self.first_batch_timestamp_ms = -1
        self._bytes_since_index = 0
        self._pending_time_entry: tuple[int, int] | None = None
        self.closed = False

    # -- opening ----------------------------------------------------------------------------

    def load_trusted(self, max_batch_bytes: int) -> None:
        """Open after a clean shutdown: trust the log, check the indexes, find the end."""
        try:
            self.index.load()
            self.time_index.load()
            if self.index.values and self.index.values[-1] >= max(self.size, 1):
                raise IndexCorrupt("offset index points past the log")
        except IndexCorrupt:
            self.recover(max_batch_bytes)
            return
        position = self.index.values[-1] if self.index.values else 0
        last: BatchHeader | None = None
        while position < self.size:
            last = self.header_at(position)
            position += last.size
        if last is not None:
            self.next_offset = last.next_offset
        elif self.index.keys:
            self.next_offset = self.base_offset + self.index.keys[-1]
        if self.size:
            self.first_batch_timestamp_ms = self.header_at(0).max_timestamp_ms
        self.max_timestamp_ms = self._scan_max_timestamp()

    def recover(self, max_batch_bytes: int) -> int:
        """Re-validate every batch, truncate at the first bad one, rebuild both indexes.

        Returns the number of bytes truncated. A batch is kept only if it is whole, passes
        its CRC and structure checks, continues the offset chain of the batch before it, and
        does not lower the leader epoch.
        """
        self.index.reset()
        self.time_index.reset()
        self._bytes_since_index = 0
        self.max_timestamp_ms = -1
        self.first_batch_timestamp_ms = -1
        expected = self.base_offset
        last_epoch = 0
        position = 0
        chunk = b""
        chunk_start = 0
        while position < self.size:
            offset_in_chunk = position - chunk_start
            if len(chunk) - offset_in_chunk < HEADER_SIZE:
                chunk_start = position
                chunk = os.pread(self.fd, _RECOVERY_CHUNK_BYTES, position)
                offset_in_chunk = 0
            try:
                header = read_header(chunk, offset_in_chunk)
                if header.size > len(chunk) - offset_in_chunk and header.size <= max_batch_bytes:
                    chunk_start = position
                    chunk = os.pread(self.fd, max(_RECOVERY_CHUNK_BYTES, header.size), position)
                    offset_in_chunk = 0
                header = check_batch(
                    chunk, offset_in_chunk, len(chunk) - offset_in_chunk, max_batch_bytes
                )
            except CorruptBatch:
                break
            # base_offset and leader_epoch sit outside the CRC (the leader writes them in
            # place), so they are checked by their own invariants: offsets continue the
            # chain, epochs never go below zero or backwards.
            if header.base_offset != expected or header.leader_epoch < last_epoch:
                break
            last_epoch = header.leader_epoch
            self._index_batch(
                BatchPosition(
                    position, header.base_offset, header.next_offset, header.max_timestamp_ms
                ),
                header.size,
            )
            expected = header.next_offset
            position += header.size
        truncated = self.size - position
        if truncated:
            os.ftruncate(self.fd, position)
            self.size = position
        self.next_offset = expected
        return truncated

    # -- writing ----------------------------------------------------------------------------

    def append(self, data: bytes | bytearray | memoryview, batches: list[BatchPosition]) -> None:
        """Write ``data`` (whole batches) at the end; ``batches`` positions are relative."""
        start = self.size
        written = os.pwrite(self.fd, data, start)
        if written != len(data):
            # A short write leaves a torn tail; cut it so the file stays a sequence of batches.
            os.ftruncate(self.fd, start)
            raise OSError(f"short write to {self.log_path}: {written} of {len(data)} bytes")
        self.size = start + len(data)
        for i, b in enumerate(batches):
            end = batches[i + 1].position if i + 1 < len(batches) else len(data)
            self._index_batch(
                BatchPosition(start + b.position, b.base_offset, b.next_offset, b.max_timestamp_ms),
                end - b.position,
            )
        self.next_offset = batches[-1].next_offset

    def _index_batch(self, b: BatchPosition, size: int) -> None:
        if self.first_batch_timestamp_ms < 0:
            self.first_batch_timestamp_ms = b.max_timestamp_ms
        relative = b.base_offset - self.base_offset
        if self._bytes_since_index >= self.index_interval_bytes or not self.index.keys:
            if not self.index.keys or relative > self.index.keys[-1]:
                self.index.append(relative, b.position)
            self._bytes_since_index = 0
            if b.max_timestamp_ms > self.max_timestamp_ms:
                self._append_time_entry(b.max_timestamp_ms, relative)
        self._bytes_since_index += size
        if b.max_timestamp_ms > self.max_timestamp_ms:
            self.max_timestamp_ms = b.max_timestamp_ms
            self._pending_time_entry = (b.max_timestamp_ms, relative)

    def _append_time_entry(self, timestamp_ms: int, relative: int) -> None:
        t = self.time_index
        if (not t.keys or timestamp_ms > t.keys[-1]) and (not t.values or relative > t.values[-1]):
            t.append(timestamp_ms, relative)

    def seal(self) -> None:
        """Called when the segment stops being active: record its final max timestamp."""
        if self._pending_time_entry is not None:
            self._append_time_entry(*self._pending_time_entry)

    def truncate_to(self, offset: int) -> None:
        """Drop every batch at or after ``offset`` (a batch boundary)."""
        if offset >= self.next_offset:
            if offset == self.next_offset:
                return
            raise InvalidTruncation(f"offset {offset} is beyond segment end {self.next_offset}")
        position, base = self.find_batch(offset)
        if base != offset:
            raise InvalidTruncation(f"offset {offset} is inside a batch starting at {base}")
        relative = offset - self.base_offset
        os.ftruncate(self.fd, position)
        self.size = position
        self.index.truncate_entries(self.index.last_below(relative) + 1)
        keep = 0
        while keep < len(self.time_index) and self.time_index.values[keep] < relative:
            keep += 1
        self.time_index.truncate_entries(keep)
        self.next_offset = offset
        self.max_timestamp_ms = self._scan_max_timestamp()
        self._pending_time_entry = None
        if self.size == 0:
            self.first_batch_timestamp_ms = -1
        self._bytes_since_index = self.index_interval_bytes  # next batch gets an entry

    # -- reading ----------------------------------------------------------------------------

    def header_at(self, position: int) -> BatchHeader:
        return read_header(os.pread(self.fd, HEADER_SIZE, position))

    def find_batch(self, offset: int) -> tuple[int, int]:
        """(position, base offset) of the batch holding ``offset``; (size, end) if none."""
        i = self.index.floor(offset - self.base_offset)
        position = self.index.values[i] if i >= 0 else 0
        while position < self.size:
            header = self.header_at(position)
            if header.next_offset > offset:
                return position, header.base_offset
            position += header.size
        return self.size, self.next_offset

    def span(self, position: int, max_bytes: int, max_offset: int, min_one_batch: bool) -> int:
        """Bytes of whole batches from ``position``: within max_bytes, below max_offset."""
        length = 0
        while position + length < self.size:
            header = self.header_at(position + length)
            if header.next_offset > max_offset:
                break
            if length + header.size > max_bytes and not (min_one_batch and length == 0):
                break
            length += header.size
        return length

    def first_position_at_time(self, timestamp_ms: int) -> tuple[int, BatchHeader] | None:
        """The first batch whose max timestamp is >= ``timestamp_ms``, or None."""
        i = self.time_index.last_below(timestamp_ms)
        position = 0
        if i >= 0:
            j = self.index.floor(self.time_index.values[i])
            position = self.index.values[j] if j >= 0 else 0
        while position < self.size:
            header = self.header_at(position)
            if header.max_timestamp_ms >= timestamp_ms:
                return position, header
            position += header.size
        return None

    def _scan_max_timestamp(self) -> int:
        best = -1
        i = len(self.time_index) - 1
        j = self.index.floor(self.time_index.values[i]) if i >= 0 else -1
        position = self.index.values[j] if j >= 0 else 0
        if i >= 0:
            best = self.time_index.keys[i]
        while position < self.size:
            header = self.header_at(position)
            best = max(best, header.max_timestamp_ms)
            position += header.size
        return best

    # -- lifecycle --------------------------------------------------------------------------

    def info(self) -> SegmentInfo:
        return SegmentInfo(
            self.base_offset, self.next_offset, self.size, self.log_path, self.max_timestamp_ms
        )

    def sync_indexes(self) -> None:
        self.index.sync()
        self.time_index.sync()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        os.close(self.fd)
        self.index.close()
        self.time_index.close()

    def mark_deleted(self) -> list[Path]:
        """Rename the files to ``*.deleted``; the fds stay open until :meth:`close`."""
        renamed = []
        for path in (self.log_path, self.index.path, self.time_index.path):
            target = path.with_name(path.name + DELETED_SUFFIX)
            if path.exists():
                path.rename(target)
                renamed.append(target)
        return renamed
