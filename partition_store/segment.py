"""One log segment: a ``.log`` file of whole batches plus its offset and time indexes.

Modelled on Kafka's LogSegment. The ``.log`` is the truth; both indexes are sparse
accelerators kept in step with every append and rebuilt from the log whenever they look
wrong. The segment locates batches by reading their fixed headers only (never records), and
writes with plain ``pwrite`` into the page cache: making data durable is the job of a
:class:`~rillet.partition_store.flush_plan.FlushPlan` on a duplicate descriptor.
"""

from __future__ import annotations

import bisect
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from rillet.partition_store.batch_scan import iter_headers, iter_valid_batches
from rillet.partition_store.batch_verify import BatchDamage, VerifyOutcome, verify_file_range
from rillet.partition_store.errors import CorruptLog, InvalidTruncation, LogDamaged
from rillet.partition_store.layout import DELETED_SUFFIX, segment_paths
from rillet.partition_store.recent_batches import RecentBatch, RecentBatches
from rillet.partition_store.sparse_index import IndexCorrupt, OffsetIndex, TimeIndex
from rillet.wire import disk_io
from rillet.wire.batch import HEADER_SIZE, BatchHeader, read_header

NO_TIMESTAMP = -1


class PlacedBatch(NamedTuple):
    """A validated batch of an append, located inside the appended buffer."""

    position: int
    size: int
    base_offset: int
    next_offset: int
    max_timestamp_ms: int


class RecoveredSegment(NamedTuple):
    batches: int
    bytes_truncated: int


@dataclass(frozen=True, slots=True)
class SegmentInfo:
    """A snapshot of a segment for retention, admin tools and tests.

    ``last_written_ms`` is the ``.log`` file's modification time: when a batch was last
    written to it, on this host's clock. It is read from the file, not kept in memory, so it
    survives restarts (retention counts a segment's age from it, see ``retention``).
    """

    base_offset: int
    next_offset: int
    size_bytes: int
    max_timestamp_ms: int
    log_path: Path
    index_path: Path
    time_index_path: Path
    last_written_ms: int


# Reads of a segment never update its access time. Under the usual ``relatime`` mount option
# the first read after each append would (the file's mtime is newer than its atime), which
# dirties the inode: on ext4 a journal handle, so a fetch of a partition's tail could wait
# for a journal commit that other files' creation or syncs started.
_NO_ATIME = getattr(os, "O_NOATIME", 0)


def _open_without_atime(path: Path, flags: int) -> int:
    """Open (or create), then ask for ``O_NOATIME`` where the platform has it. The kernel
    grants it only to the file's owner (EPERM otherwise: a file of another user, a mount
    that maps owners): the file then stays open without it. Setting it after the open, not
    in it, leaves an exclusive create that the flag would refuse done once, not twice."""
    fd = disk_io.open_fd(path, flags, 0o644)
    if _NO_ATIME:
        try:
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | _NO_ATIME)
        except PermissionError:
            pass
    return fd


class LogSegment:
    """A segment's files and in-memory state. Not thread-safe: one owner calls everything.

    ``first_append_ms`` is the roll clock for ``segment_ms``: the caller's time at the first
    append (or, after a restart, the first batch's timestamp capped at the open time).
    """

    def __init__(
        self, directory: Path, base_offset: int, index_interval_bytes: int, fresh: bool
    ) -> None:
        """Open the segment's files; ``fresh`` creates a new, empty segment."""
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.paths = segment_paths(directory, base_offset)
        flags = os.O_RDWR | os.O_CREAT | (os.O_EXCL if fresh else 0)
        self.fd = _open_without_atime(self.paths.log, flags)
        try:
            self.index = OffsetIndex(self.paths.offset_index, fresh)
            self.time_index = TimeIndex(self.paths.time_index, fresh)
        except BaseException:
            disk_io.close(self.fd)
            raise
        self.size = os.fstat(self.fd).st_size
        self.next_offset = base_offset
        self.max_timestamp_ms = NO_TIMESTAMP
        self._max_ts_relative = 0
        self.last_epoch = -1  # leader epoch of the last batch; -1 while empty
        self.first_append_ms = -1
        self._bytes_since_index = 0
        self._indexes_dirty = fresh
        self._scan_chunk = max(index_interval_bytes + 2 * HEADER_SIZE, 4096)
        self.closed = False
        # CRC-checked ranges (bit rot, see batch_verify): the prefix [0, verified_bytes),
        # whose end starts offset verified_offset, and everything this process appended
        # from appended_from on (appends are validated before they are written). Bytes
        # loaded from disk and trusted, not re-read, are checked on their first serve.
        self.verified_bytes = 0
        self.verified_offset = base_offset
        self.appended_from = self.size
        self.damage: BatchDamage | None = None  # the first damaged batch found, if any
        self._recent = RecentBatches()  # where the last appended batches start

    # -- loading ----------------------------------------------------------------------------

    def load_trusted(self) -> None:
        """Load a segment whose ``.log`` is trusted (fsynced or cleanly closed).

        Only the indexes are checked, and the tail after the last index entry is walked to
        find the end. Raises IndexCorrupt or CorruptLog when the indexes do not hold up; the
        caller then runs :meth:`recover`, which rebuilds them.
        """
        self.index.load()
        self.time_index.load()
        self.index.check(self.size)
        if self.size == 0:
            if len(self.time_index):
                raise IndexCorrupt(f"{self.paths.time_index.name}: entries for an empty log")
            return
        last_time = self.time_index.last_entry()
        if last_time is None:
            raise IndexCorrupt(f"{self.paths.time_index.name}: the first batch has no entry")
        self.max_timestamp_ms, self._max_ts_relative = last_time
        self._scan_tail()
        timestamp, relative = last_time
        found = self.find_batch(self.base_offset + relative)
        if found is None or found[1].base_offset != self.base_offset + relative:
            raise IndexCorrupt(f"{self.paths.time_index.name}: entry off a batch boundary")
        if found[1].max_timestamp_ms != timestamp:
            raise IndexCorrupt(f"{self.paths.time_index.name}: entry disagrees with the log")

    def _scan_tail(self) -> None:
        """Walk the batches after the last offset-index entry: end, epoch, max timestamp."""
        if not self.index.keys:
            self.next_offset, self.last_epoch, self._bytes_since_index = self.base_offset, -1, 0
            return
        expected = self.base_offset + self.index.keys[-1]
        start = self.index.values[-1]
        for _, header in iter_headers(self.fd, start, self.size, self._scan_chunk):
            if header.base_offset != expected:
                raise IndexCorrupt(f"{self.paths.offset_index.name}: batch at {expected} not found")
            if header.max_timestamp_ms > self.max_timestamp_ms:
                self.max_timestamp_ms = header.max_timestamp_ms
                self._max_ts_relative = header.base_offset - self.base_offset
            expected = header.next_offset
            self.last_epoch = header.leader_epoch
        self.next_offset = expected
        self._bytes_since_index = self.size - start

    def recover(self, min_epoch: int) -> RecoveredSegment:
        """Re-validate every batch, cut the log at the first bad one, rebuild both indexes.

        A batch is kept only if it is whole, passes its structure and CRC checks, continues
        the offset chain, and does not lower the leader epoch (``min_epoch`` is the epoch of
        the previous segment's last batch). ``base_offset`` and ``leader_epoch`` sit outside
        the CRC, since the leader writes them in place, so these invariants protect them.
        """
        self.index.reset()
        self.time_index.reset()
        self._recent.forget()
        self._indexes_dirty = True
        self.max_timestamp_ms, self._max_ts_relative = NO_TIMESTAMP, 0
        self._bytes_since_index = 0
        expected, epoch, end, count = self.base_offset, min_epoch, 0, 0
        for position, header in iter_valid_batches(self.fd, self.size):
            if header.base_offset != expected or header.leader_epoch < epoch:
                break
            self._index_batch(position, header.size, header.base_offset, header.max_timestamp_ms)
            expected, epoch = header.next_offset, header.leader_epoch
            end = position + header.size
            count += 1
        truncated = self.size - end
        if truncated:
            disk_io.ftruncate(self.fd, end)
            self.size = end
        self.next_offset = expected
        self.verified_bytes, self.verified_offset, self.appended_from = end, expected, end
        self.last_epoch = epoch if count else -1
        return RecoveredSegment(count, truncated)

    def first_batch_timestamp_ms(self) -> int:
        """Max timestamp of the first batch (the roll clock's origin after a restart)."""
        data = disk_io.pread(self.fd, HEADER_SIZE, 0) if self.size >= HEADER_SIZE else b""
        return read_header(data).max_timestamp_ms if data else NO_TIMESTAMP

    # -- writing ----------------------------------------------------------------------------

    def append(
        self, data: bytes | bytearray | memoryview, batches: list[PlacedBatch], epoch: int
    ) -> None:
        """Write whole, validated batches at the end of the log and index them.

        On a failed or short write the file is cut back, so it stays a sequence of whole
        batches, and the OSError propagates (the broker answers KAFKA_STORAGE_ERROR).
        """
        start = self.size
        view = memoryview(data).cast("B")
        written = 0
        try:
            while written < len(view):
                n = disk_io.pwrite(self.fd, view[written:], start + written)
                if n == 0:
                    raise OSError(f"no progress writing {self.paths.log}")
                written += n
        except OSError:
            disk_io.ftruncate(self.fd, start)
            raise
        self.size = start + written
        recent = self._recent
        for b in batches:
            self._index_batch(start + b.position, b.size, b.base_offset, b.max_timestamp_ms)
            recent.appended(b.base_offset, b.next_offset, start + b.position)
        self.next_offset = batches[-1].next_offset
        self.last_epoch = epoch
        self._indexes_dirty = True

    def _index_batch(self, position: int, size: int, base_offset: int, max_ts: int) -> None:
        """Kafka's rule: an index entry for the first batch, then for the first batch after
        every ``index_interval_bytes``; a time entry with it when the max timestamp grew."""
        relative = base_offset - self.base_offset
        if max_ts > self.max_timestamp_ms or not self.index.keys:
            self.max_timestamp_ms, self._max_ts_relative = max_ts, relative
        if not self.index.keys or self._bytes_since_index > self.index_interval_bytes:
            self.index.append(relative, position)
            self.time_index.maybe_append(self.max_timestamp_ms, self._max_ts_relative)
            self._bytes_since_index = 0
        self._bytes_since_index += size

    def seal(self) -> None:
        """The segment stops being active (roll, close): record its final max timestamp, so
        the time index's last entry is the segment's largest timestamp."""
        if self.size:
            self.time_index.maybe_append(self.max_timestamp_ms, self._max_ts_relative)
            self._indexes_dirty = True

    def truncate_to(self, offset: int) -> None:
        """Drop every batch at or after ``offset``, which must start a batch of this segment."""
        found = self.find_batch(offset)
        if found is None or found[1].base_offset != offset:
            raise InvalidTruncation(f"offset {offset} does not start a batch of this segment")
        self.cut(found[0], offset)

    def cut(self, position: int, offset: int) -> None:
        """Drop everything from byte ``position``, the start of the batch at ``offset``.

        Also the repair of a damaged batch: its position and offset come from the verified
        batches before it, so the damaged header itself is never read.
        """
        if not 0 <= position <= self.size or not self.base_offset <= offset:
            raise InvalidTruncation(f"cannot cut {self.paths.log.name} at position {position}")
        relative = offset - self.base_offset
        self._recent.forget()
        disk_io.ftruncate(self.fd, position)
        self.size = position
        self.index.truncate_entries(self.index.count_below(relative))
        self.time_index.truncate_entries(self.time_index.count_below(relative))
        self._indexes_dirty = True
        last_time = self.time_index.last_entry()
        self.max_timestamp_ms, self._max_ts_relative = last_time or (NO_TIMESTAMP, 0)
        self.last_epoch = -1
        self._scan_tail()
        if self.size == 0:
            self.first_append_ms = -1
        if self.verified_bytes > position:
            self.verified_bytes, self.verified_offset = position, offset
        self.appended_from = min(self.appended_from, position)
        if self.damage is not None and self.damage.position >= position:
            self.damage = None

    # -- reading ----------------------------------------------------------------------------

    def find_batch(self, offset: int) -> tuple[int, BatchHeader] | None:
        """``(position, header)`` of the batch holding ``offset``; None if not in this segment."""
        if not self.base_offset <= offset < self.next_offset:
            return None
        _, position = self.index.lookup(offset - self.base_offset)
        for pos, header in iter_headers(self.fd, position, self.size, self._scan_chunk):
            if header.next_offset > offset:
                return pos, header
        raise CorruptLog(f"{self.paths.log.name}: offset {offset} is missing")

    def read(
        self,
        fetch_offset: int,
        max_offset: int,
        max_bytes: int,
        min_one_batch: bool,
        recheck: bool = False,
    ) -> tuple[int, int, int] | None:
        """``(base offset, position, length)`` of the whole batches to return for a fetch:
        from the batch holding ``fetch_offset``, none reaching ``max_offset``, within
        ``max_bytes`` except one whole first batch with ``min_one_batch`` (KIP-74).
        None when there is nothing to return. ``recheck`` checks the range's CRCs even
        where they were checked before (a reader reported a bad one)."""
        damage = self.damage
        if damage is not None and fetch_offset >= damage.offset:
            raise LogDamaged(damage)  # nothing at or after a damaged batch is served
        batch = None if recheck else self._recent.find(fetch_offset)
        if batch is None:
            batch = self._locate(fetch_offset)
        base_offset, next_offset, position = batch
        if next_offset > max_offset:
            return None
        if damage is not None and position >= damage.position:
            raise LogDamaged(damage)
        try:
            end = self.size if max_offset >= self.next_offset else self.position_of(max_offset)
            if damage is not None:
                end = min(end, damage.position)  # the batches before it are intact
            length = self.span(position, end, max_bytes, min_one_batch)
        except CorruptLog:
            raise LogDamaged(self._header_damage(fetch_offset)) from None
        if length:
            length = self._checked_length(position, fetch_offset, length, recheck)
        return (base_offset, position, length) if length else None

    def _locate(self, fetch_offset: int) -> RecentBatch:
        """The batch holding ``fetch_offset``, found through the offset index and the
        headers after its entry; LogDamaged when those headers make no sense."""
        try:
            found = self.find_batch(fetch_offset)
        except CorruptLog:
            found = None
        if found is None or not (
            found[1].base_offset <= fetch_offset < found[1].next_offset <= self.next_offset
        ):
            raise LogDamaged(self._header_damage(fetch_offset))
        position, header = found
        return RecentBatch(header.base_offset, header.next_offset, position)

    def _checked_length(
        self, position: int, fetch_offset: int, length: int, recheck: bool = False
    ) -> int:
        """How much of ``[position, position + length)`` may be served: all of it once its
        CRCs are known good (checked now if they were not), else the batches before the
        first damaged one. Raises LogDamaged when that is the first batch.

        An unchecked range is walked from a point whose offset is known — the verified
        prefix's end or the offset-index entry before it (at most an index interval
        earlier) — so that a damaged ``base_offset`` (outside the CRC) breaks the chain
        instead of mislabelling the records served.
        """
        lo = position if recheck else max(position, self.verified_bytes)
        hi = position + length if recheck else min(position + length, self.appended_from)
        if lo >= hi:
            return length  # the hot path: already checked, sendfile only
        start, expected = self.verified_bytes, self.verified_offset
        if lo > start or recheck:
            relative, entry_position = self.index.lookup(fetch_offset - self.base_offset)
            if entry_position > start or recheck:
                start, expected = entry_position, self.base_offset + relative
        outcome = verify_file_range(self.fd, start, hi, expected)
        if outcome.damage_reason is None:
            self.note_verified(start, outcome)
            return length
        damage = self.note_damage(outcome)
        if outcome.end_position <= position:  # (a break before it breaks its offsets too)
            raise LogDamaged(damage)
        return outcome.end_position - position

    def _header_damage(self, fetch_offset: int) -> BatchDamage:
        """The damage behind a header walk that made no sense (a batch that does not hold the
        offset it was found for, a length that runs off the segment): the header fields
        outside the CRC — base offset, length — rotted. Verifies from the offset-index entry
        before ``fetch_offset``, whose offset is known, to the first damaged batch.

        Without this a damaged base offset made reads return nothing, forever, and a damaged
        length an error that no repair acted on. Raises CorruptLog if the walk finds no
        damage after all (the segment and its index disagree).
        """
        relative, start = self.index.lookup(max(fetch_offset - self.base_offset, 0))
        outcome = verify_file_range(self.fd, start, self.size, self.base_offset + relative)
        if outcome.damage_reason is None:
            raise CorruptLog(f"{self.paths.log.name}: offset {fetch_offset} is missing")
        return self.note_damage(outcome)

    def note_verified(self, start: int, outcome: VerifyOutcome) -> None:
        """Batches from ``start`` to ``outcome.end_position`` passed their check: extend the
        verified prefix when the range joins it."""
        if start <= self.verified_bytes < outcome.end_position <= self.size:
            self.verified_bytes, self.verified_offset = outcome.end_position, outcome.next_offset

    def note_damage(self, outcome: VerifyOutcome) -> BatchDamage:
        """The batch at ``outcome.end_position`` failed its check; remember the first one."""
        damage = BatchDamage(
            self.paths.log,
            outcome.end_position,
            outcome.next_offset,
            outcome.damage_reason or "damaged",
        )
        if self.damage is None or damage.position < self.damage.position:
            self.damage = damage
        return self.damage

    def position_of(self, offset: int) -> int:
        """Start of the batch holding ``offset``; the log's size if it lies beyond the end."""
        if offset <= self.base_offset:
            return 0
        recent = self._recent.find(offset)
        if recent is not None:
            return recent.position
        found = self.find_batch(offset)
        return self.size if found is None else found[0]

    def span(self, position: int, end: int, max_bytes: int, min_one_batch: bool) -> int:
        """Bytes of whole batches from ``position`` to at most ``end``, within ``max_bytes``
        (except one whole first batch when ``min_one_batch``). Both ends are batch starts.

        Index entries are batch starts too, so the walk begins at the last one that still
        fits and reads at most an index interval of headers.
        """
        if end - position <= max_bytes:
            return end - position
        limit = position + max(max_bytes, 0)
        values = self.index.values
        i = bisect.bisect_right(values, limit) - 1
        walk_from = max(position, values[i]) if i >= 0 else position
        length = walk_from - position
        for _, header in iter_headers(self.fd, walk_from, end, self._scan_chunk):
            if length + header.size > max_bytes:
                if length == 0 and min_one_batch:
                    return header.size
                break
            length += header.size
        return length

    def first_batch_at_time(self, timestamp_ms: int, from_offset: int) -> BatchHeader | None:
        """The first batch at or after ``from_offset`` whose max timestamp is at least
        ``timestamp_ms``; None if none in this segment."""
        if self.max_timestamp_ms < timestamp_ms or from_offset >= self.next_offset:
            return None
        below = self.time_index.last_offset_below(timestamp_ms)
        start = self.base_offset + (below if below is not None else 0)
        found = self.find_batch(max(start, from_offset, self.base_offset))
        if found is None:
            return None
        for _, header in iter_headers(self.fd, found[0], self.size, self._scan_chunk):
            if header.max_timestamp_ms >= timestamp_ms:
                return header
        return None

    def max_timestamp_batch_offset(self) -> int | None:
        """Base offset of the first batch holding this segment's largest timestamp (kept
        as batches are indexed, so no scan); None while the segment is empty."""
        if not self.size or self.max_timestamp_ms == NO_TIMESTAMP:
            return None
        return self.base_offset + self._max_ts_relative

    # -- lifecycle --------------------------------------------------------------------------

    def info(self) -> SegmentInfo:
        p = self.paths
        return SegmentInfo(
            self.base_offset,
            self.next_offset,
            self.size,
            self.max_timestamp_ms,
            p.log,
            p.offset_index,
            p.time_index,
            os.fstat(self.fd).st_mtime_ns // 1_000_000,
        )

    def dup_fds(self, with_indexes: bool) -> list[int]:
        """Duplicate descriptors for a flush on another thread (which closes them)."""
        fds = [disk_io.dup(self.fd)]
        if with_indexes:
            fds += [self.index.dup_fd(), self.time_index.dup_fd()]
        return fds

    def write_indexes(self, sync: bool) -> None:
        """Write the indexes' pending entries (a close): fsynced with ``sync``, else left
        for the sync of the file system a batched close makes afterwards."""
        if self._indexes_dirty:
            for index in (self.index, self.time_index):
                if sync:
                    index.sync()
                else:
                    index.write_pending()
            self._indexes_dirty = False

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        disk_io.close(self.fd)
        self.index.close()
        self.time_index.close()

    def rename_for_deletion(self) -> list[Path]:
        """Rename the files to ``*.deleted``; the log's descriptor stays open, so reads in
        flight (sendfile on a duplicated fd) finish, and the indexes follow their files.
        Returns the new paths."""
        renamed = []
        for path in self.paths:
            target = path.with_name(path.name + DELETED_SUFFIX)
            # An index follows its name even when its file does not exist yet (indexes are
            # created at their first write): a late write must never land at the old name.
            if path == self.paths.offset_index:
                self.index.renamed(target)
            elif path == self.paths.time_index:
                self.time_index.renamed(target)
            try:
                disk_io.replace(path, target)
            except FileNotFoundError:
                continue
            renamed.append(target)
        return renamed
