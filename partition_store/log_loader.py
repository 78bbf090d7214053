"""Opening a partition directory: find the segments, recover what a crash left, check indexes.

Modelled on Kafka's LogLoader. The rule is simple: a segment is *trusted* (only its indexes
are checked, and its tail after the last index entry walked) when either

- the last run closed cleanly and the segment still has the size recorded at close, or
- it lies wholly below the recovery point (its bytes were fsynced before the crash).

Every other segment is *recovered*: re-validated batch by batch (structure, CRC, offset chain,
leader epoch), cut at the first batch that is not intact, and re-indexed. A trusted segment
whose indexes fail a check is recovered too. Once a segment has been cut, every later one is
deleted, and so is any segment that does not start where the previous one ends: the log is
again one gap-free chain of intact batches.

Guarantee: after a crash at any byte of any write, the reopened log holds exactly the batches
whose bytes are intact up to the first damage, and appends continue at their end.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rillet.partition_store.cleaner_swap import complete_swaps
from rillet.partition_store.config import LogConfig
from rillet.partition_store.errors import CorruptLog
from rillet.partition_store.layout import (
    DELETED_SUFFIX,
    INDEX_SUFFIX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    TMP_SUFFIX,
    TXN_INDEX_SUFFIX,
    parse_segment_base,
    segment_paths,
)
from rillet.partition_store.partition_files import PartitionFiles
from rillet.partition_store.segment import LogSegment
from rillet.partition_store.sparse_index import IndexCorrupt
from rillet.wire import disk_io
from rillet.wire.atomic_file import SyncBatch, fsync_dir


@dataclass(slots=True)
class RecoveryStats:
    """What opening the log did; exposed as ``PartitionLog.recovery_stats`` for tests/ops."""

    clean_shutdown: bool = False  # the clean-shutdown marker was found
    segments_loaded: int = 0
    segments_trusted: int = 0  # loaded without re-reading their batches
    segments_recovered: int = 0  # re-validated batch by batch
    indexes_rebuilt: int = 0  # trusted segments whose indexes failed a check
    segments_deleted: int = 0  # after a cut, or a break in the offset chain
    batches_validated: int = 0
    bytes_truncated: int = 0
    stray_files_removed: int = 0  # *.deleted, *.tmp, indexes without a .log
    swaps_completed: int = 0  # log cleans committed before a crash, finished on open


@dataclass(slots=True)
class LoadedLog:
    segments: list[LogSegment]
    log_start_offset: int
    recovery_point: int
    stats: RecoveryStats


def load_log(directory: Path, config: LogConfig, files: PartitionFiles, now_ms: int) -> LoadedLog:
    """Load (and if needed repair) every segment of an existing or new partition directory."""
    stats = RecoveryStats()
    stats.swaps_completed = complete_swaps(directory)  # before strays: it removes sources
    stats.stray_files_removed = remove_strays(directory)
    clean_sizes = files.take_clean_shutdown()
    stats.clean_shutdown = clean_sizes is not None
    recovery_point = files.read_recovery_point()
    bases = sorted(b for p in directory.iterdir() if (b := parse_segment_base(p.name)) is not None)
    interval = config.index_interval_bytes
    segments: list[LogSegment] = []
    broken = False
    epoch_floor = 0
    for i, base in enumerate(bases):
        if broken or (segments and base != segments[-1].next_offset):
            broken = True
            for path in segment_paths(directory, base):
                disk_io.unlink_missing_ok(path)
            stats.segments_deleted += 1
            continue
        segment = LogSegment(directory, base, interval, fresh=False)
        segments.append(segment)
        if clean_sizes is not None:
            trusted = clean_sizes.get(base) == segment.size
        else:
            trusted = i + 1 < len(bases) and bases[i + 1] <= recovery_point
        if trusted:
            try:
                segment.load_trusted()
                stats.segments_trusted += 1
            except (IndexCorrupt, CorruptLog):
                trusted = False
                stats.indexes_rebuilt += 1
        if not trusted:
            outcome = segment.recover(epoch_floor)
            stats.segments_recovered += 1
            stats.batches_validated += outcome.batches
            stats.bytes_truncated += outcome.bytes_truncated
            broken = outcome.bytes_truncated > 0
        if segment.last_epoch >= 0:
            epoch_floor = segment.last_epoch
    if not segments:
        start = files.read_log_start_offset() or 0
        segments.append(LogSegment(directory, start, interval, fresh=True))
    for segment in segments[:-1]:
        segment.seal()  # a recovered, rolled segment needs its final time entry back
    active = segments[-1]
    if active.size:
        active.first_append_ms = min(active.first_batch_timestamp_ms(), now_ms)
    stats.segments_loaded = len(segments)
    log_end = active.next_offset
    start = max(files.read_log_start_offset() or 0, segments[0].base_offset)
    return LoadedLog(segments, min(start, log_end), min(recovery_point, log_end), stats)


def create_directory(directory: Path) -> bool:
    """Create the partition directory if missing; True when this call created it."""
    try:
        directory.mkdir(parents=True)
    except FileExistsError:
        if not directory.is_dir():
            raise
        return False
    return True


def make_name_durable(directory: Path, sync_batch: SyncBatch | None) -> None:
    """A new directory's entry in its parent is made durable with the files written in it
    (a partition's data must not outlive its directory's name in a power failure): by the
    batch's sync, else by an fsync of the parent (after the new files' own, whose journal
    commit usually carried it already)."""
    if sync_batch is None:
        fsync_dir(directory.parent)
    else:
        sync_batch.note(directory.parent)


def new_log(directory: Path, config: LogConfig) -> LoadedLog:
    """The log of a directory this process has just created: one empty segment at offset 0.

    Nothing in it can need finding or recovering, so none of :func:`load_log`'s reads are
    made (strays, the clean-shutdown marker, checkpoints, the segment listing): creating a
    topic of thousands of partitions spends its file-system operations on the files it
    creates.
    """
    segment = LogSegment(directory, 0, config.index_interval_bytes, fresh=True)
    return LoadedLog([segment], 0, 0, RecoveryStats(segments_loaded=1))


def remove_strays(directory: Path) -> int:
    """Remove what an interrupted run left half-done; returns how many files.

    ``*.deleted`` segments were already out of the log; ``*.tmp`` checkpoints were never
    renamed into place; an index without its ``.log`` belonged to a deleted segment.
    """
    removed = 0
    names = {p.name for p in directory.iterdir()}
    logs = {n[: -len(LOG_SUFFIX)] for n in names if n.endswith(LOG_SUFFIX)}
    for name in names:
        stray = name.endswith((DELETED_SUFFIX, TMP_SUFFIX))
        for suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX):
            if name.endswith(suffix) and parse_segment_base(name, suffix) is not None:
                stray = stray or name[: -len(suffix)] not in logs
        if stray:
            disk_io.unlink(directory / name)
            removed += 1
    return removed
