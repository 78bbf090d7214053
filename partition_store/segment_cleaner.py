"""The log cleaner's file work, run in a worker thread: build the key map, write cleaned
segments into the staging directory.

Input is a :class:`CleanJob`: the plan (``compaction_plan``) and duplicated descriptors of
every segment it names, taken on the event loop, so the live log may go on appending,
rolling or deleting meanwhile (the swap checks that the sources are still there). Output is
a list of :class:`StagedSegment`: for each group, ``cleaner-staging/<base>.log`` with its
indexes, fsynced, ready for ``cleaner_swap``. Every source batch is CRC-checked before it
is rewritten (a rewrite recomputes CRCs: it must never launder a damaged batch); a damaged
one aborts the clean with CorruptLog.

Reads and writes are paced to ``io_max_bytes_per_second`` (Kafka's
``log.cleaner.io.max.bytes.per.second``) by :class:`IoBudget`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rillet.partition_store.batch_cleaning import BatchCleaner, CleaningStats, batch_keys
from rillet.partition_store.compaction_plan import CleanPlan
from rillet.partition_store.errors import CorruptLog
from rillet.partition_store.layout import segment_paths
from rillet.partition_store.segment import LogSegment
from rillet.wire import disk_io
from rillet.wire.atomic_file import fsync_dir, write_all
from rillet.wire.batch import check_batch, peek_length
from rillet.wire.errors import WireError

STAGING_DIR = "cleaner-staging"
READ_CHUNK_BYTES = 1 << 20
UNLIMITED = -1
YIELD_INTERVAL_S = 0.0005
# What one key costs the map beyond its bytes (dict slot, bytes and int objects), roughly.
MAP_ENTRY_OVERHEAD_BYTES = 100
DEFAULT_MAP_MAX_BYTES = 128 * 1024 * 1024  # Kafka's log.cleaner.dedupe.buffer.size


class IoBudget:
    """Sleeps so that bytes read plus written average at most ``bytes_per_second``
    (``UNLIMITED``: never), and hands the GIL over at least every ``YIELD_INTERVAL_S`` of
    work (:meth:`pause_point`). The clock and the sleep are injected for tests."""

    def __init__(
        self,
        bytes_per_second: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._rate = bytes_per_second
        self._clock = clock
        self._sleep = sleep
        self._start = self._last_yield = clock()
        self.bytes = 0

    def pause_point(self) -> None:
        """Called between batches. The cleaner decodes and encodes records in Python, so
        its thread holds the GIL; left alone, the event loop's thread would wait up to the
        interpreter's switch interval (5 ms) for it at every turn, which produce latency
        shows. A sleep of 0 releases it now and then."""
        now = self._clock()
        if now - self._last_yield >= YIELD_INTERVAL_S:
            self._sleep(0)
            self._last_yield = self._clock()

    def spend(self, n: int) -> None:
        self.bytes += n
        if self._rate <= 0:
            return
        ahead = self.bytes / self._rate - (self._clock() - self._start)
        if ahead > 0:
            self._sleep(ahead)


@dataclass(frozen=True, slots=True)
class SourceSegment:
    base_offset: int
    next_offset: int
    size_bytes: int
    fd: int  # a duplicate, closed by :func:`close_sources`


@dataclass(slots=True)
class CleanJob:
    directory: Path
    plan: CleanPlan
    sources: dict[int, SourceSegment]  # by base offset, every segment of every group
    index_interval_bytes: int
    generation: int  # the log's truncation count when the job was made
    map_max_bytes: int = DEFAULT_MAP_MAX_BYTES


@dataclass(frozen=True, slots=True)
class StagedSegment:
    base_offset: int
    next_offset: int
    size_bytes: int
    sources: tuple[tuple[int, int], ...]  # (base offset, size) of the segments it replaces


@dataclass(slots=True)
class CleanResult:
    staged: list[StagedSegment]
    stats: CleaningStats
    bytes_read: int = 0
    bytes_written: int = 0
    keys: int = 0
    dirty_end: int = 0  # where this clean's key map ended: the next first dirty offset
    durations_s: dict[str, float] = field(default_factory=dict)


def staging_dir(directory: Path) -> Path:
    return directory / STAGING_DIR


def close_sources(job: CleanJob) -> None:
    for source in job.sources.values():
        disk_io.close(source.fd)


def iter_segment_batches(source: SourceSegment, budget: IoBudget) -> Iterator[bytes]:
    """Every batch of a sealed segment, CRC-checked; CorruptLog at the first bad one."""
    position, end = 0, source.size_bytes
    while position < end:
        chunk = disk_io.pread(source.fd, min(READ_CHUNK_BYTES, end - position), position)
        if len(chunk) >= 12:
            size = peek_length(chunk)[1]
            if len(chunk) < size <= end - position:  # one batch larger than a chunk
                chunk = disk_io.pread(source.fd, size, position)
        budget.spend(len(chunk))
        at = 0
        while at < len(chunk):
            try:
                size = peek_length(chunk, at)[1] if len(chunk) - at >= 12 else len(chunk) + 1
                if size > len(chunk) - at:
                    break  # continues in the next chunk
                header = check_batch(chunk, at, len(chunk) - at, end)
            except WireError as exc:
                raise CorruptLog(
                    f"segment {source.base_offset}: batch at byte {position + at}: {exc}"
                ) from exc
            budget.pause_point()
            yield bytes(chunk[at : at + header.size])
            at += header.size
        if at == 0:
            raise CorruptLog(f"segment {source.base_offset}: no whole batch at byte {position}")
        position += at


def build_key_map(job: CleanJob, budget: IoBudget) -> tuple[dict[bytes, int], int]:
    """Key -> offset of its latest record, over the dirty segments, and where the map ends:
    the plan's dirty end, or earlier (at a segment's end) once the map holds about
    ``map_max_bytes`` (Kafka's ``log.cleaner.dedupe.buffer.size``); the next clean goes on
    from there."""
    latest: dict[bytes, int] = {}
    plan = job.plan
    map_bytes, end = 0, plan.dirty_end
    for source in sorted(job.sources.values(), key=lambda s: s.base_offset):
        if source.next_offset <= plan.dirty_start or source.base_offset >= plan.dirty_end:
            continue
        if latest and map_bytes >= job.map_max_bytes:
            end = source.base_offset
            break
        for raw in iter_segment_batches(source, budget):
            keys = batch_keys(raw)
            if keys is not None:
                for key, offset in keys:
                    if key not in latest:
                        map_bytes += len(key) + MAP_ENTRY_OVERHEAD_BYTES
                    latest[key] = offset
    return latest, end


def run_clean(job: CleanJob, budget: IoBudget) -> CleanResult:
    """Build the key map, then write every group's cleaned segment to the staging dir
    (only the segments below the map's end)."""
    started = time.monotonic()
    latest, dirty_end = build_key_map(job, budget)
    mapped = time.monotonic()
    plan = job.plan
    staging = staging_dir(job.directory)
    staging.mkdir(exist_ok=True)
    result = CleanResult([], CleaningStats(), keys=len(latest), dirty_end=dirty_end)
    for group in plan.groups:
        sources = [job.sources[b] for b in group if job.sources[b].next_offset <= dirty_end]
        if not sources:
            break
        cleaner = BatchCleaner(latest, plan.now_ms, plan.delete_horizon_ms)
        staged = _write_group(staging, sources, cleaner, budget, job.index_interval_bytes)
        result.staged.append(staged)
        result.bytes_written += staged.size_bytes
        for name in ("batches_in", "batches_out", "records_dropped", "tombstones_dropped"):
            setattr(result.stats, name, getattr(result.stats, name) + getattr(cleaner.stats, name))
    fsync_dir(staging)
    result.bytes_read = budget.bytes - result.bytes_written
    result.durations_s = {"map": mapped - started, "write": time.monotonic() - mapped}
    return result


def _write_group(
    staging: Path,
    sources: list[SourceSegment],
    cleaner: BatchCleaner,
    budget: IoBudget,
    index_interval_bytes: int,
) -> StagedSegment:
    base = sources[0].base_offset
    path = segment_paths(staging, base).log
    for stale in segment_paths(staging, base):
        disk_io.unlink_missing_ok(stale)
    out = disk_io.open_fd(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        pending: list[bytes] = []
        pending_bytes = 0
        for source in sources:
            for data in cleaner.clean(iter_segment_batches(source, budget)):
                pending.append(data)
                pending_bytes += len(data)
                if pending_bytes >= READ_CHUNK_BYTES:
                    write_all(out, b"".join(pending))
                    budget.spend(pending_bytes)
                    pending, pending_bytes = [], 0
        pending += list(cleaner.finish())
        data = b"".join(pending)
        write_all(out, data)
        budget.spend(len(data))
        disk_io.fsync(out)
    finally:
        disk_io.close(out)
    segment = LogSegment(staging, base, index_interval_bytes, fresh=False)
    try:
        recovered = segment.recover(-1)  # re-reads what was written; builds the indexes
        expected = sources[-1].next_offset
        if recovered.bytes_truncated or segment.next_offset != expected:
            raise CorruptLog(
                f"cleaned segment {base} ends at {segment.next_offset}, not {expected}"
            )
        segment.seal()
        segment.write_indexes(sync=True)
        size = segment.size
    finally:
        segment.close()
    # Time retention counts from a segment's last write too: the copy keeps its sources'
    # (else every clean would restart a compact,delete log's retention clock).
    written_ns = max(os.fstat(s.fd).st_mtime_ns for s in sources)
    os.utime(path, ns=(written_ns, written_ns))
    return StagedSegment(
        base, expected, size, tuple((s.base_offset, s.size_bytes) for s in sources)
    )
