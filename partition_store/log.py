"""One partition's log: an ordered list of segments with one active segment at the end.

Appends validate every batch (structure and CRC, never the records) before writing a byte,
then assign offsets in place. Reads return byte ranges of whole batches as file regions for
``sendfile``. Retention deletes whole segments; flushing happens through :class:`FlushPlan`
so the fsync can run off the caller's thread.
"""

from __future__ import annotations

import bisect
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from rillet.partition_store.checkpoint import read_int, write_atomically, write_int
from rillet.partition_store.config import LogConfig
from rillet.partition_store.errors import (
    InvalidRecords,
    InvalidTruncation,
    NonContiguousAppend,
    OffsetOutOfRange,
    RecordTooLarge,
    StoreError,
)
from rillet.partition_store.flush_plan import FlushPlan
from rillet.partition_store.log_loader import (
    CLEAN_SHUTDOWN_FILE,
    RECOVERY_POINT_FILE,
    RecoveryStats,
    load_segments,
    purge_leftovers,
)
from rillet.partition_store.segment import BatchPosition, LogSegment, SegmentInfo
from rillet.wire.batch import BatchView, assign_offset_and_epoch, iter_batches, peek_length
from rillet.wire.errors import CorruptBatch
from rillet.wire.frame import FileRegion

LOG_START_OFFSET_FILE = "log-start-offset-checkpoint"
PARTITION_META_FILE = "partition.meta"


@dataclass(frozen=True, slots=True)
class AppendResult:
    first_offset: int
    last_offset: int
    batch_count: int
    record_count: int
    size_bytes: int
    max_timestamp_ms: int


@dataclass(frozen=True, slots=True)
class ReadResult:
    region: FileRegion | None
    first_offset: int


@dataclass(slots=True)
class _PendingDeletion:
    segment: LogSegment
    delete_at_ms: int


class PartitionLog:
    """Not thread-safe: one owner (the broker's event loop) calls every method."""

    def __init__(
        self,
        directory: Path,
        config: LogConfig,
        segments: list[LogSegment],
        log_start_offset: int,
        recovery_point: int,
        stats: RecoveryStats,
    ) -> None:
        self.directory = directory
        self.config = config
        self._segments = segments
        self._bases = [s.base_offset for s in segments]
        self._log_start_offset = log_start_offset
        self._recovery_point = recovery_point
        self.recovery_stats = stats
        self._pending_deletions: list[_PendingDeletion] = []
        self._unflushed_records = 0
        self._first_unflushed_ms = -1
        self._rolled_unflushed = False
        self._closed = False

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    def open(
        cls, directory: Path, config: LogConfig, now_ms: int, topic: str, partition: int
    ) -> PartitionLog:
        """Open or create the partition directory, recovering from a crash if needed."""
        directory.mkdir(parents=True, exist_ok=True)
        meta = directory / PARTITION_META_FILE
        if not meta.exists():
            write_atomically(meta, f"topic={topic}\npartition={partition}\nversion=1\n".encode())
        purge_leftovers(directory)
        marker = directory / CLEAN_SHUTDOWN_FILE
        clean = marker.exists()
        recovery_point = read_int(directory / RECOVERY_POINT_FILE) or 0
        segments, stats = load_segments(
            directory, config.index_interval_bytes, config.max_batch_bytes, clean, recovery_point
        )
        marker.unlink(missing_ok=True)
        if not segments:
            segments = [
                LogSegment(
                    directory,
                    read_int(directory / LOG_START_OFFSET_FILE) or 0,
                    config.index_interval_bytes,
                )
            ]
        start = max(read_int(directory / LOG_START_OFFSET_FILE) or 0, segments[0].base_offset)
        end = segments[-1].next_offset
        start = min(start, end)
        log = cls(directory, config, segments, start, min(recovery_point, end), stats)
        if segments[-1].size == 0 and segments[-1].first_batch_timestamp_ms < 0:
            segments[-1].first_batch_timestamp_ms = -1
        return log

    # -- offsets ----------------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._segments[-1].next_offset

    @property
    def recovery_point(self) -> int:
        return self._recovery_point

    @property
    def size_bytes(self) -> int:
        return sum(s.size for s in self._segments)

    @property
    def active_segment(self) -> LogSegment:
        return self._segments[-1]

    def segments(self) -> list[SegmentInfo]:
        return [s.info() for s in self._segments]

    # -- appending --------------------------------------------------------------------------

    def _validate(self, records: bytes | bytearray | memoryview) -> list[BatchView]:
        if len(records) == 0:
            raise InvalidRecords("no batches to append")
        try:
            return list(iter_batches(records, self.config.max_batch_bytes))
        except CorruptBatch as exc:
            if len(records) >= 12:
                _, size = peek_length(records, 0)
                if size > self.config.max_batch_bytes:
                    raise RecordTooLarge(str(exc)) from exc
            raise InvalidRecords(str(exc)) from exc

    def append_as_leader(
        self, records: bytes | bytearray | memoryview, leader_epoch: int, now_ms: int
    ) -> AppendResult:
        """Validate, assign offsets from the log end and the leader epoch, write."""
        views = self._validate(records)
        data = bytearray(records)
        next_offset = self.log_end_offset
        positions = []
        record_count = 0
        max_ts = -1
        for view in views:
            h = view.header
            assign_offset_and_epoch(data, view.position, next_offset, leader_epoch)
            positions.append(
                BatchPosition(
                    view.position, next_offset, next_offset + h.record_count, h.max_timestamp_ms
                )
            )
            next_offset += h.record_count
            record_count += h.record_count
            max_ts = max(max_ts, h.max_timestamp_ms)
        return self._write(data, positions, record_count, max_ts, now_ms)

    def append_as_follower(
        self, records: bytes | bytearray | memoryview, now_ms: int
    ) -> AppendResult:
        """Append batches that already carry their offsets (replication)."""
        views = self._validate(records)
        expected = self.log_end_offset
        positions = []
        record_count = 0
        max_ts = -1
        for view in views:
            h = view.header
            if h.base_offset != expected:
                raise NonContiguousAppend(
                    f"batch at offset {h.base_offset} does not continue the log at {expected}"
                )
            positions.append(
                BatchPosition(view.position, h.base_offset, h.next_offset, h.max_timestamp_ms)
            )
            expected = h.next_offset
            record_count += h.record_count
            max_ts = max(max_ts, h.max_timestamp_ms)
        return self._write(records, positions, record_count, max_ts, now_ms)

    def _write(
        self,
        data: bytes | bytearray | memoryview,
        positions: list[BatchPosition],
        record_count: int,
        max_ts: int,
        now_ms: int,
    ) -> AppendResult:
        self._maybe_roll(len(data), now_ms)
        segment = self.active_segment
        if segment.size == 0:
            segment.first_batch_timestamp_ms = now_ms  # time-based roll counts from here
        segment.append(data, positions)
        if self._unflushed_records == 0:
            self._first_unflushed_ms = now_ms
        self._unflushed_records += record_count
        return AppendResult(
            positions[0].base_offset,
            positions[-1].next_offset - 1,
            len(positions),
            record_count,
            len(data),
            max_ts,
        )

    def _maybe_roll(self, incoming_bytes: int, now_ms: int) -> None:
        segment = self.active_segment
        if segment.size == 0:
            return
        too_big = segment.size + incoming_bytes > self.config.segment_bytes
        too_old = (
            segment.first_batch_timestamp_ms >= 0
            and now_ms - segment.first_batch_timestamp_ms >= self.config.segment_ms
        )
        relative_overflow = self.log_end_offset - segment.base_offset > 0x7FFF0000
        if too_big or too_old or relative_overflow:
            self.roll(now_ms)

    def roll(self, now_ms: int) -> None:
        """Start a new active segment at the log end (no-op if the active one is empty)."""
        active = self.active_segment
        if active.size == 0:
            return
        active.seal()
        segment = LogSegment(self.directory, self.log_end_offset, self.config.index_interval_bytes)
        self._segments.append(segment)
        self._bases.append(segment.base_offset)
        self._rolled_unflushed = True

    # -- reading ----------------------------------------------------------------------------

    def _segment_index(self, offset: int) -> int:
        return max(bisect.bisect_right(self._bases, offset) - 1, 0)

    def _check_range(self, offset: int) -> None:
        if offset < self._log_start_offset or offset > self.log_end_offset:
            raise OffsetOutOfRange(offset, self._log_start_offset, self.log_end_offset)

    def read(
        self,
        fetch_offset: int,
        max_bytes: int,
        max_offset: int | None = None,
        min_one_batch: bool = True,
    ) -> ReadResult:
        """Whole batches from the one holding ``fetch_offset``, within one segment."""
        self._check_range(fetch_offset)
        limit = self.log_end_offset if max_offset is None else max_offset
        i = self._segment_index(fetch_offset)
        while i < len(self._segments):
            segment = self._segments[i]
            position, base = segment.find_batch(fetch_offset)
            if position < segment.size:
                length = segment.span(position, max_bytes, limit, min_one_batch)
                if length == 0:
                    return ReadResult(None, fetch_offset)
                return ReadResult(FileRegion(segment.fd, position, length), base)
            i += 1  # the offset is at this segment's end: the next segment starts there
        return ReadResult(None, fetch_offset)

    def read_bytes(self, fetch_offset: int, max_bytes: int, max_offset: int | None = None) -> bytes:
        result = self.read(fetch_offset, max_bytes, max_offset)
        if result.region is None:
            return b""
        r = result.region
        return os.pread(r.fd, r.length, r.position)

    def offset_for_timestamp(self, timestamp_ms: int) -> tuple[int, int] | None:
        """(base offset, max timestamp) of the first batch with max timestamp >= the time."""
        for segment in self._segments:
            if segment.max_timestamp_ms < timestamp_ms:
                continue
            found = segment.first_position_at_time(timestamp_ms)
            if found is not None:
                _, header = found
                if header.next_offset <= self._log_start_offset:
                    continue
                return max(header.base_offset, self._log_start_offset), header.max_timestamp_ms
        return None

    # -- truncation and retention -----------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        """Remove every batch at or after ``offset``; used by replication to drop a suffix."""
        if offset >= self.log_end_offset:
            if offset == self.log_end_offset:
                return
            raise InvalidTruncation(f"{offset} is beyond the log end {self.log_end_offset}")
        if offset < self._log_start_offset:
            raise InvalidTruncation(f"{offset} is below the log start {self._log_start_offset}")
        i = self._segment_index(offset)
        for segment in self._segments[i + 1 :]:
            self._delete_now(segment)
        del self._segments[i + 1 :]
        del self._bases[i + 1 :]
        self._segments[i].truncate_to(offset)
        self._recovery_point = min(self._recovery_point, offset)
        write_int(self.directory / RECOVERY_POINT_FILE, self._recovery_point)

    def advance_log_start_offset(self, offset: int) -> None:
        if offset <= self._log_start_offset:
            return
        if offset > self.log_end_offset:
            raise OffsetOutOfRange(offset, self._log_start_offset, self.log_end_offset)
        self._log_start_offset = offset
        write_int(self.directory / LOG_START_OFFSET_FILE, offset)

    def delete_expired_segments(self, now_ms: int) -> int:
        """Apply retention by time, size and log start offset; whole segments only."""
        self._purge_deleted(now_ms)
        cfg = self.config
        excess = self.size_bytes - cfg.retention_bytes if cfg.retention_bytes >= 0 else 0
        count = 0
        while len(self._segments) > 1:
            oldest = self._segments[0]
            expired_by_time = (
                cfg.retention_ms >= 0
                and oldest.max_timestamp_ms >= 0
                and now_ms - oldest.max_timestamp_ms > cfg.retention_ms
            )
            expired_by_size = excess >= oldest.size > 0 or (excess > 0 and oldest.size == 0)
            below_start = oldest.next_offset <= self._log_start_offset
            if not (expired_by_time or expired_by_size or below_start):
                break
            excess -= oldest.size
            self._segments.pop(0)
            self._bases.pop(0)
            oldest.mark_deleted()
            self._pending_deletions.append(
                _PendingDeletion(oldest, now_ms + cfg.file_delete_delay_ms)
            )
            count += 1
        if count:
            self.advance_log_start_offset(self._segments[0].base_offset)
        self._purge_deleted(now_ms)
        return count

    def _purge_deleted(self, now_ms: int) -> None:
        keep = []
        for pending in self._pending_deletions:
            if pending.delete_at_ms <= now_ms:
                pending.segment.close()
                for path in self.directory.glob(f"{pending.segment.log_path.stem}.*.deleted"):
                    path.unlink(missing_ok=True)
            else:
                keep.append(pending)
        self._pending_deletions = keep

    def _delete_now(self, segment: LogSegment) -> None:
        segment.close()
        for path in (segment.log_path, segment.index.path, segment.time_index.path):
            path.unlink(missing_ok=True)

    # -- flushing ---------------------------------------------------------------------------

    def needs_flush(self, now_ms: int) -> bool:
        cfg = self.config
        if self._rolled_unflushed:
            return True
        if self._unflushed_records == 0:
            return False
        if cfg.flush_messages > 0 and self._unflushed_records >= cfg.flush_messages:
            return True
        return cfg.flush_ms >= 0 and now_ms - self._first_unflushed_ms >= cfg.flush_ms

    def flush_plan(self) -> FlushPlan | None:
        """What to fsync to make everything appended so far durable, or None."""
        end = self.log_end_offset
        if end <= self._recovery_point and not self._rolled_unflushed:
            return None
        fds = [
            os.dup(s.fd)
            for s in self._segments
            if s.next_offset > self._recovery_point or s is self.active_segment
        ]
        plan = FlushPlan(fds, end, self._unflushed_records)
        self._unflushed_records = 0
        self._rolled_unflushed = False
        return plan

    def flush_completed(self, plan: FlushPlan) -> None:
        if not plan.done:
            raise StoreError("flush_completed called before the plan ran")
        if plan.up_to_offset > self._recovery_point and not self._closed:
            self._recovery_point = min(plan.up_to_offset, self.log_end_offset)
            write_int(self.directory / RECOVERY_POINT_FILE, self._recovery_point)

    def flush(self) -> None:
        plan = self.flush_plan()
        if plan is not None:
            plan.run()
            self.flush_completed(plan)

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Flush, seal and close; leave the clean-shutdown marker for a fast reopen."""
        if self._closed:
            return
        self.flush()
        for segment in self._segments:
            segment.seal()
            segment.sync_indexes()
            segment.close()
        for pending in self._pending_deletions:
            pending.segment.close()
        self._pending_deletions = []
        write_int(self.directory / LOG_START_OFFSET_FILE, self._log_start_offset)
        write_atomically(self.directory / CLEAN_SHUTDOWN_FILE, b"clean\n")
        self._closed = True

    def delete(self) -> None:
        if not self._closed:
            for segment in self._segments:
                segment.close()
            for pending in self._pending_deletions:
                pending.segment.close()
            self._closed = True
        shutil.rmtree(self.directory, ignore_errors=True)
