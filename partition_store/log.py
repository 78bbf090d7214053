"""One partition's log: an ordered list of segments, the last one active.

Modelled on Kafka's UnifiedLog. Appends validate every batch (structure and CRC, never the
records) before writing a byte, then assign offsets in place. Reads return byte ranges of
whole batches as file regions for ``sendfile``. Retention deletes whole segments. Flushing
is split in three (plan on the event loop, fsync on a worker thread, complete on the event
loop) so that no fsync ever blocks appends.

Not thread-safe: one owner (the broker's event loop) calls every method; only
:meth:`FlushPlan.run` may run elsewhere. Time comes in as ``now_ms`` arguments.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from rillet.partition_store.append_validation import (
    FOLLOWER_MAX_BATCH_BYTES,
    place_follower_batches,
    place_leader_batches,
    validate_batches,
)
from rillet.partition_store.batch_verify import BatchDamage, VerifyOutcome
from rillet.partition_store.checkpoint import write_int
from rillet.partition_store.cleaner_swap import (
    commit_swap,
    discard_staged,
    finish_swap,
    remove_staging,
)
from rillet.partition_store.compaction_plan import CleanPlan, SegmentSummary
from rillet.partition_store.config import LogConfig
from rillet.partition_store.deferred_deletion import DeferredDeletions
from rillet.partition_store.errors import (
    CorruptLog,
    InvalidRecords,
    InvalidTruncation,
    LogClosed,
    OffsetOutOfRange,
    StoreError,
)
from rillet.partition_store.flush_plan import FlushPlan
from rillet.partition_store.flush_policy import FlushPolicy
from rillet.partition_store.layout import MAX_RELATIVE_OFFSET, RECOVERY_POINT_FILE, TMP_SUFFIX
from rillet.partition_store.leader_epoch_file import LeaderEpochFile
from rillet.partition_store.log_loader import (
    RecoveryStats,
    create_directory,
    load_log,
    make_name_durable,
    new_log,
)
from rillet.partition_store.log_segments import LogSegments
from rillet.partition_store.partition_files import PartitionFiles, PartitionMeta
from rillet.partition_store.producer_state import (
    InvalidProducerEpoch,
    ProducerStateTable,
    write_producer_state,
)
from rillet.partition_store.retention import deletable_segment_count
from rillet.partition_store.scrub_plan import ScrubTarget
from rillet.partition_store.segment import LogSegment, PlacedBatch, SegmentInfo
from rillet.partition_store.segment_cleaner import CleanJob, SourceSegment, StagedSegment
from rillet.partition_store.sparse_index import IndexCorrupt
from rillet.partition_store.transaction_index import AbortedIndex
from rillet.partition_store.transaction_recovery import load_transaction_state
from rillet.partition_store.transaction_state import AbortedTxn
from rillet.wire import disk_io
from rillet.wire.atomic_file import SyncBatch
from rillet.wire.batch import BatchHeader, assign_offset_and_epoch
from rillet.wire.control_batch import Marker, encode_marker, is_control, read_marker
from rillet.wire.errors import CorruptBatch
from rillet.wire.frame import FileRegion


@dataclass(frozen=True, slots=True)
class AppendResult:
    first_offset: int
    last_offset: int
    batch_count: int
    record_count: int
    size_bytes: int
    max_timestamp_ms: int
    duplicate: bool = False  # an idempotent retry: these are the original offsets


@dataclass(frozen=True, slots=True)
class ReadResult:
    """``region`` is a range of a segment's fd, valid until the segment is deleted and
    ``file_delete_delay_ms`` has passed; None when there is nothing to return."""

    region: FileRegion | None
    first_offset: int  # base offset of the first batch returned, else the fetch offset


class PartitionLog:
    def __init__(
        self,
        directory: Path,
        config: LogConfig,
        now_ms: int,
        topic: str,
        partition: int,
        topic_id: str = "",
        sync_batch: SyncBatch | None = None,
    ) -> None:
        """Use :meth:`open`."""
        self.directory = directory
        self.config = config
        created = create_directory(directory)
        self._files = PartitionFiles(directory)
        if created:  # nothing in it to check, load or recover
            meta = PartitionMeta(topic, partition, now_ms, topic_id=topic_id)
            self._files.create_meta(meta, sync_batch)
            make_name_durable(directory, sync_batch)
            loaded = new_log(directory, config)
        else:
            self._files.ensure_meta(topic, partition, now_ms, topic_id, sync_batch)
            loaded = load_log(directory, config, self._files, now_ms)
        self.recovery_stats: RecoveryStats = loaded.stats
        self._segments = LogSegments(loaded.segments)
        self._log_start_offset = loaded.log_start_offset
        self._flush = FlushPolicy(config, loaded.recovery_point, self.log_end_offset, now_ms)
        self._last_epoch = self._latest_segment_epoch()
        self._deletions = DeferredDeletions()
        self._now_ms = now_ms  # latest time a caller told us; dates deferred deletions
        self._closed = False
        if created:
            self._epochs = LeaderEpochFile.empty(directory)
            self._producers = ProducerStateTable()
            self._aborted = AbortedIndex()
        else:
            self._epochs = LeaderEpochFile.open(
                directory, self._segments.as_list(), self._log_start_offset, self._last_epoch
            )
            self._producers, self._aborted = load_transaction_state(
                directory, self._segments.as_list(), self.log_end_offset
            )
        self._truncations = 0  # a scrub's findings apply only to the log it read
        self._first_dirty_offset = 0  # where the last clean stopped (in memory: see docs)

    @classmethod
    def open(
        cls,
        directory: Path,
        config: LogConfig,
        now_ms: int,
        topic: str,
        partition: int,
        topic_id: str = "",
        sync_batch: SyncBatch | None = None,
    ) -> PartitionLog:
        """Open the partition directory (creating it if missing), recovering after a crash.

        ``topic_id`` (when given) tells incarnations of a topic name apart: a directory left
        by a deleted topic of the same name is refused with TopicIdMismatch. With
        ``sync_batch``, the files a new log creates are durable once the batch commits (the
        caller opens many logs, commits, and only then uses them).
        """
        return cls(directory, config, now_ms, topic, partition, topic_id, sync_batch)

    def reconfigure(self, config: LogConfig) -> None:
        """Apply a topic's changed settings from now on: retention, segment rolling, flush
        and timestamp rules read ``config`` at their next use; existing segments and
        indexes are not rewritten."""
        self.config = config
        self._flush.config = config

    # -- state ------------------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        """The offset the next appended record gets (LEO)."""
        return self._segments.active.next_offset

    @property
    def truncations(self) -> int:
        """How many times this log was cut since it was opened: what was read or asked for
        before a cut may not describe the log any more, even at the same end offset."""
        return self._truncations

    @property
    def recovery_point(self) -> int:
        """Offsets below this are fsynced (survive a power loss, not just a crash)."""
        return self._flush.recovery_point

    @property
    def latest_epoch(self) -> int:
        """Leader epoch of the last batch in the log; -1 when empty."""
        return self._last_epoch

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(epoch, end offset) of ``epoch`` in this log, for a follower's divergence check
        (KIP-101/279): the largest known epoch not above it and where that epoch ended."""
        return self._epochs.end_offset_for(epoch, self.log_end_offset)

    def start_leader_epoch(self, epoch: int) -> None:
        """This replica became leader in ``epoch``: the epoch starts at the log end now, even
        before it appends (as Kafka's makeLeader does), so followers of older epochs learn
        where those ended in this log."""
        if epoch > self._epochs.latest_epoch():
            self._epochs.note_batch(epoch, self.log_end_offset)

    @property
    def epoch_history(self) -> LeaderEpochFile:
        return self._epochs

    @property
    def size_bytes(self) -> int:
        return sum(s.size for s in self._segments)

    @property
    def active_segment(self) -> LogSegment:
        return self._segments.active

    def segments(self) -> list[SegmentInfo]:
        return [s.info() for s in self._segments]

    # -- appending --------------------------------------------------------------------------

    def append_as_leader(
        self, records: bytes | bytearray | memoryview, leader_epoch: int, now_ms: int
    ) -> AppendResult:
        """Validate all batches, assign offsets from the log end and the epoch, write.

        Raises InvalidRecords / RecordTooLarge (nothing written) or InvalidLeaderEpoch.
        """
        self._check_open()
        views = validate_batches(records, self.config.max_batch_bytes)
        if any(is_control(v.header) for v in views):
            raise InvalidRecords("control batches come from the transaction coordinator only")
        original = self._producers.check_append([v.header for v in views])
        if original is not None:
            return AppendResult(
                original.first_offset, original.last_offset, 0, 0, 0, -1, duplicate=True
            )
        placed = place_leader_batches(views, self.log_end_offset, leader_epoch, self._last_epoch)
        data = bytearray(records)
        for b in placed:
            assign_offset_and_epoch(data, b.position, b.base_offset, leader_epoch)
        result = self._append(data, placed, leader_epoch, now_ms)
        self._epochs.note_batch(leader_epoch, placed[0].base_offset)  # once it is written
        for view, batch in zip(views, placed, strict=True):
            self._producers.update(view.header, batch.base_offset)
            self._producers.transactions.on_data(view.header, batch.base_offset)
        return result

    def append_marker_as_leader(
        self, marker: Marker, leader_epoch: int, now_ms: int
    ) -> AppendResult:
        """Write a transaction marker (the coordinator's WriteTxnMarkers) at the log end:
        the producer's transaction here is over, committed or aborted.

        Raises InvalidProducerEpoch for a marker older than the producer's epoch here (a
        fenced coordinator's late marker must not end a newer transaction).
        """
        self._check_open()
        entry = self._producers.producers.get(marker.producer_id)
        if entry is not None and marker.producer_epoch < entry.epoch:
            raise InvalidProducerEpoch(
                f"marker of producer {marker.producer_id} epoch {marker.producer_epoch} is "
                f"older than {entry.epoch}"
            )
        data = bytearray(encode_marker(marker, now_ms))
        views = validate_batches(data, len(data))
        placed = place_leader_batches(views, self.log_end_offset, leader_epoch, self._last_epoch)
        assign_offset_and_epoch(data, 0, placed[0].base_offset, leader_epoch)
        result = self._append(data, placed, leader_epoch, now_ms)
        self._epochs.note_batch(leader_epoch, placed[0].base_offset)
        self._end_transaction(marker, placed[0].base_offset)
        return result

    def _end_transaction(self, marker: Marker, offset: int) -> None:
        aborted = self._producers.transactions.on_marker(marker, offset)
        if aborted is not None:
            self._aborted.add(self.active_segment.base_offset, aborted)

    # -- transactions -----------------------------------------------------------------------

    def first_unstable_offset(self) -> int | None:
        """First offset of the earliest transaction still open here (None: none open)."""
        return self._producers.transactions.first_unstable_offset()

    def last_stable_offset(self, high_watermark: int) -> int:
        """The LSO: read_committed consumers read below it, never at or past it (the high
        watermark, or the first offset of the earliest open transaction if lower). For the
        fetch path and the log cleaner (which must not clean at or past it)."""
        unstable = self.first_unstable_offset()
        return high_watermark if unstable is None else min(high_watermark, unstable)

    def aborted_transactions(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """The aborted transactions overlapping ``[fetch_offset, upper_bound)`` (see
        :meth:`AbortedIndex.collect`): what a read_committed fetch of that range returns."""
        return self._aborted.collect(fetch_offset, upper_bound)

    def open_transactions(self) -> dict[int, int]:
        """Producer id -> first offset of its open transaction here (a copy)."""
        return dict(self._producers.transactions.ongoing)

    def starts_transaction(self, header: BatchHeader) -> bool:
        """Whether appending this transactional batch would open a transaction here (KIP-890:
        the leader first checks that the coordinator added the partition to it)."""
        return header.producer_id not in self._producers.transactions.ongoing

    def producers(self) -> list[tuple[int, int, int, int, int]]:
        """(producer id, epoch, last sequence, first offset of its last batch, first offset
        of its open transaction or -1) for every producer this log knows (DescribeProducers)."""
        ongoing = self._producers.transactions.ongoing
        return [
            (
                pid,
                entry.epoch,
                entry.batches[-1].last_sequence if entry.batches else -1,
                entry.batches[-1].first_offset if entry.batches else -1,
                ongoing.get(pid, -1),
            )
            for pid, entry in sorted(self._producers.producers.items())
        ]

    def producer_last_offset(self, producer_id: int) -> int | None:
        """Where the idempotent producer's last batch in this log ends (None: unknown)."""
        return self._producers.last_offset_of(producer_id)

    def append_as_follower(
        self, records: bytes | bytearray | memoryview, now_ms: int
    ) -> AppendResult:
        """Append replicated batches that already carry offsets and epochs, unchanged.

        They must start at the log end and be contiguous (NonContiguousAppend otherwise).
        """
        self._check_open()
        views = validate_batches(records, FOLLOWER_MAX_BATCH_BYTES)
        placed, epoch = place_follower_batches(views, self.log_end_offset, self._last_epoch)
        result = self._append(records, placed, epoch, now_ms)
        for view in views:  # per batch: a new epoch is rare, the check is one comparison
            h = view.header
            self._epochs.note_batch(h.leader_epoch, h.base_offset)
            self._producers.update(h, h.base_offset)
            if not is_control(h):
                self._producers.transactions.on_data(h, h.base_offset)
                continue
            try:
                marker = read_marker(records, view.position)
            except CorruptBatch:
                marker = None  # not Kafka's control record: copied, not interpreted
            if marker is not None:
                self._end_transaction(marker, h.base_offset)
        return result

    def _append(
        self,
        data: bytes | bytearray | memoryview,
        placed: list[PlacedBatch],
        epoch: int,
        now_ms: int,
    ) -> AppendResult:
        self._note_time(now_ms)
        first, end = placed[0].base_offset, placed[-1].next_offset
        self._maybe_roll(len(data), end - 1, now_ms)
        segment = self.active_segment
        if segment.first_append_ms < 0:
            segment.first_append_ms = now_ms
        segment.append(data, placed, epoch)
        self._last_epoch = epoch
        self._flush.on_append(now_ms)
        max_ts = max(b.max_timestamp_ms for b in placed)
        return AppendResult(first, end - 1, len(placed), end - first, len(data), max_ts)

    def _maybe_roll(self, incoming_bytes: int, last_offset: int, now_ms: int) -> None:
        segment = self.active_segment
        if segment.size == 0:
            return  # an append always fits an empty segment, however large
        cfg = self.config
        if (
            segment.size + incoming_bytes > cfg.segment_bytes
            or (segment.first_append_ms >= 0 and now_ms - segment.first_append_ms >= cfg.segment_ms)
            or last_offset - segment.base_offset > MAX_RELATIVE_OFFSET
        ):
            self.roll(now_ms)

    def roll(self, now_ms: int) -> None:
        """Seal the active segment and start a new one at the log end (no-op if empty).

        The sealed segment's data becomes due for an fsync (:meth:`needs_flush`), as Kafka
        flushes a segment when it rolls, so the recovery point keeps up by default.
        """
        self._check_open()
        self._note_time(now_ms)
        active = self.active_segment
        if active.size == 0:
            return
        active.seal()
        segment = LogSegment(
            self.directory, self.log_end_offset, self.config.index_interval_bytes, fresh=True
        )
        self._segments.roll(segment)
        self._aborted.write(active.base_offset, active.paths.txn_index)
        self._producers.transactions.sealed_below(segment.base_offset)
        write_producer_state(self.directory, self._producers)  # bounds the scan on open

    # -- reading ----------------------------------------------------------------------------

    def read(
        self,
        fetch_offset: int,
        max_bytes: int,
        max_offset: int | None = None,
        min_one_batch: bool = True,
        recheck: bool = False,
    ) -> ReadResult:
        """Whole batches from the one holding ``fetch_offset``, within one segment.

        Stops before any batch reaching ``max_offset`` (exclusive: the high watermark) and
        within ``max_bytes``, except that with ``min_one_batch`` a first batch larger than
        ``max_bytes`` is returned whole (KIP-74). Raises OffsetOutOfRange outside
        ``[log_start_offset, log_end_offset]``.

        Bytes not checked since this log was opened are CRC-checked first (all of them with
        ``recheck``, when a reader reported a bad batch): a damaged batch is never returned
        (the batches before it are), and a read starting at it raises LogDamaged.
        """
        self._check_open()
        log_end = self.log_end_offset
        if not self._log_start_offset <= fetch_offset <= log_end:
            raise OffsetOutOfRange(fetch_offset, self._log_start_offset, log_end)
        limit = log_end if max_offset is None else min(max_offset, log_end)
        if fetch_offset >= limit:
            return ReadResult(None, fetch_offset)
        segment = self._segments.holding(fetch_offset)
        found = segment.read(fetch_offset, limit, max_bytes, min_one_batch, recheck)
        if found is None:
            return ReadResult(None, fetch_offset)
        base_offset, position, length = found
        return ReadResult(FileRegion(segment.fd, position, length), base_offset)

    def read_bytes(self, fetch_offset: int, max_bytes: int, max_offset: int | None = None) -> bytes:
        """Like :meth:`read` (with ``min_one_batch``), copied out with ``pread``."""
        region = self.read(fetch_offset, max_bytes, max_offset).region
        if region is None:
            return b""
        data = disk_io.pread(region.fd, region.length, region.position)
        if len(data) != region.length:
            raise CorruptLog(f"short read at offset {fetch_offset}")
        return data

    def offset_for_timestamp(
        self, timestamp_ms: int, from_offset: int = 0
    ) -> tuple[int, int] | None:
        """``(offset, max timestamp)`` of the first batch at or after ``from_offset`` whose
        max timestamp is at least ``timestamp_ms`` (batch granularity; the offset is at least
        the log start and ``from_offset``), or None. The record Kafka names is found by
        decoding that batch (time_lookup.py).
        """
        self._check_open()
        start = max(self._log_start_offset, from_offset)
        for segment in self._segments.from_holding(start):
            header = segment.first_batch_at_time(timestamp_ms, start)
            if header is not None:
                return max(header.base_offset, start), header.max_timestamp_ms
        return None

    def max_timestamp_batch(self) -> tuple[int, int] | None:
        """``(base offset, max timestamp)`` of the first batch holding the log's largest
        timestamp (the first segment with it, as Kafka picks), or None for an empty log.

        Each segment tracks its own as batches are indexed, so this is one pass over the
        segments and no read: what ListOffsets' max-timestamp lookup starts from.
        """
        self._check_open()
        best: tuple[int, int] | None = None
        for segment in self._segments:
            base = segment.max_timestamp_batch_offset()
            if base is not None and (best is None or segment.max_timestamp_ms > best[1]):
                best = (base, segment.max_timestamp_ms)
        return best

    # -- integrity (bit rot) ----------------------------------------------------------------

    @property
    def damage(self) -> BatchDamage | None:
        """The first damaged batch found so far (by a read or a scrub), if any."""
        for segment in self._segments:
            if segment.damage is not None:
                return segment.damage
        return None

    def scrub_targets(self) -> list[ScrubTarget]:
        """Every segment's bytes as they are now, for a scrub pass (see :mod:`scrub_plan`)."""
        self._check_open()
        return [
            ScrubTarget(s.base_offset, s.size, s.paths.log, self._truncations)
            for s in self._segments
            if s.size
        ]

    def open_for_scrub(self, target: ScrubTarget) -> int | None:
        """A duplicated descriptor of the target's segment for a worker thread (which closes
        it), or None when the segment is gone or was cut since the target was taken."""
        segment = self._scrub_segment(target)
        return None if segment is None else disk_io.dup(segment.fd)

    def note_scrubbed(
        self, target: ScrubTarget, start: int, outcome: VerifyOutcome
    ) -> BatchDamage | None:
        """Adopt what a scrub step found in ``target`` from ``start``: extend the segment's
        verified range, or record the damaged batch (returned). Ignored (None) when the
        segment was deleted or the log truncated meanwhile."""
        segment = self._scrub_segment(target)
        if segment is None:
            return None
        if outcome.damage_reason is None:
            segment.note_verified(start, outcome)
            return None
        return segment.note_damage(outcome)

    def _scrub_segment(self, target: ScrubTarget) -> LogSegment | None:
        if self._closed or target.generation != self._truncations:
            return None
        segment = self._segments.at_base(target.base_offset)
        if segment is None:
            return None
        return None if segment.closed or segment.size < target.size else segment

    def truncate_to_damage(self, damage: BatchDamage) -> int:
        """Drop the damaged batch and everything after it; returns the new log end.

        For a replica that has left the ISR (its copy is not counted as committed any more)
        and re-fetches the rest from its leader. The cut is made at the position the
        verified batches before the damage end, without reading the damaged header.
        """
        self._check_open()
        i = self._segments.index_of_path(damage.segment_path)
        if i is None:
            return self.log_end_offset  # that segment is gone already (retention, a cut)
        if damage.offset <= self._log_start_offset:
            self.truncate_fully_and_start_at(self._log_start_offset)
            return self.log_end_offset
        segment = self._segments.at(i)
        self._retire(self._segments.cut_after(i))
        segment.cut(damage.position, damage.offset)
        self._after_truncation(min(self.recovery_point, damage.offset))
        return self.log_end_offset

    # -- truncation and retention -----------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        """Drop every batch at or after ``offset`` (a batch boundary, or the log end).

        For replication: a follower cuts a diverging suffix before fetching from a new
        leader. Raises InvalidTruncation inside a batch, above the log end or below the log
        start (see :meth:`truncate_fully_and_start_at`).
        """
        self._check_open()
        log_end = self.log_end_offset
        if offset == log_end:
            # Nothing to cut, but an epoch this replica started as leader without writing
            # to it may begin here: a follower must forget it to fetch the new leader's.
            self._epochs.truncate_from_end(offset)
            return
        if not self._log_start_offset <= offset < log_end:
            raise InvalidTruncation(
                f"{offset} is outside [{self._log_start_offset}, {log_end}] of this log"
            )
        i = self._segments.index_holding(offset)
        segment = self._segments.at(i)
        found = segment.find_batch(offset)
        if found is None or found[1].base_offset != offset:
            raise InvalidTruncation(f"offset {offset} is inside a batch, not at its start")
        self._retire(self._segments.cut_after(i))
        segment.truncate_to(offset)
        self._after_truncation(min(self.recovery_point, offset))

    def truncate_at_or_below(self, offset: int) -> int:
        """Truncate at ``offset``, or at the start of the batch holding it; returns where.

        For a follower told where its log diverges from the leader's: the leader's offset is
        a batch boundary in the leader's log, which need not be one in a diverged suffix
        here. Cutting lower is safe (the follower fetches the rest again).
        """
        self._check_open()
        offset = max(min(offset, self.log_end_offset), self._log_start_offset)
        if offset < self.log_end_offset:
            found = self._segments.holding(offset).find_batch(offset)
            if found is not None:
                offset = max(found[1].base_offset, self._log_start_offset)
        self.truncate_to(offset)
        return offset

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Drop the whole log and restart it empty at ``offset`` (log start = log end).

        For a follower whose log lies wholly below the leader's log start offset.
        """
        self._check_open()
        if offset < 0:
            raise InvalidTruncation(f"offset {offset} is negative")
        # Retired (renamed aside) first: the fresh segment may take the same file names.
        self._retire(self._segments.as_list())
        fresh = LogSegment(self.directory, offset, self.config.index_interval_bytes, fresh=True)
        self._segments.reset(fresh)
        self._log_start_offset = offset
        self._files.write_log_start_offset(offset)
        self._epochs.truncate_from_end(-1)  # an empty log has no epochs
        self._aborted.drop_segments_below(offset)
        self._after_truncation(offset)

    def _after_truncation(self, recovery_point: int) -> None:
        self._truncations += 1
        self._last_epoch = self._latest_segment_epoch()
        if recovery_point != self.recovery_point:
            self._files.write_recovery_point(recovery_point)
        self._flush.on_truncation(recovery_point, self.log_end_offset)
        self._epochs.truncate_from_end(self.log_end_offset)
        self._producers.truncate(self.log_end_offset)
        for base in self._aborted.truncate(self.log_end_offset):
            segment = self._segments.at_base(base)
            if segment is not None:
                self._aborted.write(base, segment.paths.txn_index)
        # A snapshot past the cut would bring truncated batches back after a crash.
        write_producer_state(self.directory, self._producers)

    def advance_log_start_offset(self, offset: int) -> None:
        """Move the log start forward (Kafka's DeleteRecords); offsets below it are no longer
        served, and segments wholly below it are deleted by the next retention pass."""
        self._check_open()
        if offset > self.log_end_offset:
            raise OffsetOutOfRange(offset, self._log_start_offset, self.log_end_offset)
        if offset > self._log_start_offset:
            self._log_start_offset = offset
            self._files.write_log_start_offset(offset)
            self._epochs.truncate_from_start(offset)

    def delete_expired_segments(self, now_ms: int) -> int:
        """Apply retention (see :mod:`retention`); returns how many segments it removed.

        Removed segments are renamed ``*.deleted`` and closed and unlinked once
        ``file_delete_delay_ms`` has passed, by this or :meth:`purge_deleted_segments`.
        """
        self._check_open()
        self._note_time(now_ms)
        infos = [s.info() for s in self._segments]
        count = deletable_segment_count(infos, self.config, now_ms, self._log_start_offset)
        self._retire(self._segments.drop_first(count))
        first_base = self._segments.first.base_offset
        self._aborted.drop_segments_below(first_base)
        if first_base > self._log_start_offset:
            self.advance_log_start_offset(first_base)
        self._deletions.purge(now_ms)
        return count

    def purge_deleted_segments(self, now_ms: int) -> int:
        """Close and unlink deleted segments whose delay has passed; returns how many."""
        self._note_time(now_ms)
        return self._deletions.purge(now_ms)

    # -- compaction (compaction_plan: what; segment_cleaner: the work; cleaner_swap) -------

    @property
    def first_dirty_offset(self) -> int:
        """Where the last clean stopped: records below it were deduplicated."""
        return max(self._first_dirty_offset, self._log_start_offset)

    def cleaner_summaries(self) -> list[SegmentSummary]:
        """Every segment for ``compaction_plan`` (the last one is the active segment)."""
        return [
            SegmentSummary(s.base_offset, s.next_offset, s.size, s.max_timestamp_ms)
            for s in self._segments
        ]

    def first_dirty_timestamp_ms(self) -> int | None:
        """Timestamp of the first dirty batch (``max_compaction_lag_ms``), if any."""
        segment = self._segments.holding(self.first_dirty_offset)
        return segment.first_batch_timestamp_ms() if segment.size else None

    def clean_job(self, plan: CleanPlan, map_max_bytes: int) -> CleanJob | None:
        """Duplicated descriptors of the plan's segments for a worker thread; None when
        one of them is gone or active (the plan is stale)."""
        self._check_open()
        by_base = {s.base_offset: s for s in self._segments.sealed()}
        wanted = [b for group in plan.groups for b in group]
        if not all(b in by_base for b in wanted):
            return None
        sources: dict[int, SourceSegment] = {}
        try:
            for b in wanted:
                s = by_base[b]
                sources[b] = SourceSegment(b, s.next_offset, s.size, disk_io.dup(s.fd))
        except OSError:
            for source in sources.values():
                disk_io.close(source.fd)
            raise
        interval = self.config.index_interval_bytes
        return CleanJob(self.directory, plan, sources, interval, self._truncations, map_max_bytes)

    def install_cleaned(self, job: CleanJob, staged: list[StagedSegment], dirty_end: int) -> int:
        """Swap cleaned segments in for their sources (crash-safe, see cleaner_swap);
        returns how many were installed. A segment whose sources changed meanwhile (a
        truncation, retention) is discarded instead."""
        installed = 0
        for segment in staged:
            if self._closed or not self._install_one(job, segment):
                discard_staged(self.directory, segment.base_offset)
            else:
                installed += 1
        remove_staging(self.directory)
        if installed == len(staged) and not self._closed:
            self._first_dirty_offset = max(self._first_dirty_offset, dirty_end)
        return installed

    def _install_one(self, job: CleanJob, staged: StagedSegment) -> bool:
        if job.generation != self._truncations:
            return False
        i, old = self._segments.run_from(staged.base_offset, len(staged.sources))
        if i + len(staged.sources) >= len(self._segments) or [
            (s.base_offset, s.size) for s in old
        ] != list(staged.sources):
            return False
        commit_swap(self.directory, staged.base_offset)
        self._retire(old)
        finish_swap(self.directory, staged.base_offset)
        cleaned = LogSegment(
            self.directory, staged.base_offset, self.config.index_interval_bytes, fresh=False
        )
        try:
            cleaned.load_trusted()
        except (IndexCorrupt, CorruptLog):
            cleaned.recover(-1)
        self._segments.replace(i, len(old), cleaned)
        # The cleaner copies transactional batches and markers unchanged: the sources'
        # aborted transactions are the merged segment's (its .txnindex went with them).
        self._aborted.merge(cleaned.base_offset, [s.base_offset for s in old])
        self._aborted.write(cleaned.base_offset, cleaned.paths.txn_index)
        return True

    # -- flushing ---------------------------------------------------------------------------

    def needs_flush(self, now_ms: int) -> bool:
        """Whether the flush policy wants an fsync now (see :mod:`flush_policy`): always
        after a roll, else per ``flush_messages`` / ``flush_ms``."""
        if self._closed:
            return False
        sealed = self._segments.sealed()
        sealed_end = sealed[-1].next_offset if sealed else 0
        return self._flush.needs_flush(now_ms, self.log_end_offset, sealed_end)

    def flush_plan(self) -> FlushPlan | None:
        """What to fsync so that every offset appended so far is durable; None if nothing.

        Run the plan anywhere (it holds duplicated descriptors), then hand it back to
        :meth:`flush_completed` on this log's thread.
        """
        self._check_open()
        up_to, recovery_point = self.log_end_offset, self.recovery_point
        if up_to <= recovery_point:
            return None
        active = self.active_segment
        fds: list[int] = []
        try:
            for segment in self._segments:
                if segment.next_offset > recovery_point or segment is active:
                    fds += segment.dup_fds(with_indexes=segment is not active)
            dir_fd = disk_io.open_fd(self.directory, os.O_RDONLY)
        except OSError:
            for fd in fds:
                disk_io.close(fd)
            raise
        seq = self._flush.on_plan()
        tmp = self.directory / f"{RECOVERY_POINT_FILE}.{seq}{TMP_SUFFIX}"
        return FlushPlan(up_to, self._flush.generation, tmp, fds, dir_fd)

    def flush_completed(self, plan: FlushPlan) -> None:
        """Adopt a plan that ran: advance the recovery point and its checkpoint.

        A plan made stale by a truncation (or beaten by a newer plan) changes nothing.
        """
        if not plan.done:
            raise StoreError("flush_completed called for a plan that has not run")
        if self._closed or not self._flush.adopt(
            plan.generation, plan.up_to_offset, self.log_end_offset, self._now_ms
        ):
            disk_io.unlink_missing_ok(plan.checkpoint_tmp)
            return
        disk_io.replace(plan.checkpoint_tmp, self._files.recovery_point_path)

    def flush(self) -> None:
        """Blocking flush on this thread: plan, run, complete."""
        plan = self.flush_plan()
        if plan is not None:
            plan.run()
            self.flush_completed(plan)

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Flush everything, seal the indexes and leave the clean-shutdown marker, so the
        next open trusts the segments instead of re-validating them."""
        if self._closed:
            return
        self.flush()
        self._write_state_files(None)
        self._leave_clean_marker(None)

    def prepare_close(self, batch: SyncBatch) -> None:
        """First half of a clean close of many logs at once (the node stopping): what
        :meth:`close` writes, without an fsync, except the two files that claim the rest is
        durable. Commit ``batch`` (one sync of the file system for every log), then call
        :meth:`finish_close`.

        The recovery point and the clean-shutdown marker are written only after that
        commit: written with the rest, either could reach the disk before the data it
        vouches for, and a power failure between the two would leave a log trusted
        without its tail."""
        self._check_open()
        self._write_state_files(batch)

    def finish_close(self, batch: SyncBatch) -> None:
        """Second half, after ``batch`` committed what :meth:`prepare_close` wrote: the
        recovery point (everything appended) and the clean-shutdown marker, durable when
        ``batch`` commits again. Releases the files."""
        self._check_open()
        write_int(self._files.recovery_point_path, self.log_end_offset, batch)
        self._leave_clean_marker(batch)

    def _write_state_files(self, batch: SyncBatch | None) -> None:
        """What a clean close writes besides the data: indexes, log start, producer state,
        leader epochs; durable at once, or when ``batch`` commits."""
        self.active_segment.seal()
        for segment in self._segments:
            segment.write_indexes(sync=batch is None)
        self._files.write_log_start_offset(self._log_start_offset, batch)
        active = self.active_segment
        self._aborted.write(active.base_offset, active.paths.txn_index, batch)
        write_producer_state(self.directory, self._producers, batch)
        self._epochs.close(batch)

    def _leave_clean_marker(self, batch: SyncBatch | None) -> None:
        """The last step of a clean close: the marker with every segment's size, then the
        files released."""
        sizes = {s.base_offset: s.size for s in self._segments}
        self._files.write_clean_shutdown(sizes, batch)
        self._release()

    def release(self) -> None:
        """Close the files and write nothing: the directory was already renamed aside for
        deletion, and another log may live at its old path by now."""
        if not self._closed:
            self._release()

    def delete(self) -> None:
        """Close without flushing and remove the partition directory and everything in it."""
        if not self._closed:
            self._release()
        shutil.rmtree(self.directory, ignore_errors=True)

    def _release(self) -> None:
        self._closed = True
        for segment in self._segments:
            segment.close()
        self._deletions.purge_all()

    # -- helpers ----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise LogClosed(f"{self.directory} is closed")

    def _retire(self, segments: list[LogSegment]) -> None:
        """Segments taken out of the log: closed and unlinked once ``file_delete_delay_ms``
        has passed (readers may still hold their regions until then)."""
        for segment in segments:
            self._deletions.schedule(segment, self._now_ms + self.config.file_delete_delay_ms)

    def _note_time(self, now_ms: int) -> None:
        self._now_ms = max(self._now_ms, now_ms)

    def _latest_segment_epoch(self) -> int:
        for segment in reversed(self._segments):
            if segment.last_epoch >= 0:
                return segment.last_epoch
        return -1
