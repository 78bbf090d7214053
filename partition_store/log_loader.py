"""Opening a partition directory: find segments, recover what a crash left, rebuild indexes.

After a clean shutdown (marker present) segments are trusted and only their indexes are
sanity-checked. Otherwise every segment from the one holding the recovery point onward is
re-validated batch by batch; at the first torn or corrupt batch the log is truncated there and
every later segment is deleted, so the log is again a gap-free chain of intact batches.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rillet.partition_store.segment import (
    DELETED_SUFFIX,
    INDEX_SUFFIX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    LogSegment,
)

CLEAN_SHUTDOWN_FILE = "clean-shutdown"
RECOVERY_POINT_FILE = "recovery-point-checkpoint"


@dataclass(slots=True)
class RecoveryStats:
    clean_shutdown: bool = False
    segments_loaded: int = 0
    segments_recovered: int = 0
    segments_deleted: int = 0
    bytes_truncated: int = 0


def purge_leftovers(directory: Path) -> None:
    """Remove files a crash may have left half-done: temp files and deferred deletions."""
    for path in directory.iterdir():
        if path.name.endswith((DELETED_SUFFIX, ".tmp")):
            path.unlink(missing_ok=True)
    # An index without its .log is garbage (its segment was deleted mid-way).
    logs = {p.stem for p in directory.glob(f"*{LOG_SUFFIX}")}
    for suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX):
        for path in directory.glob(f"*{suffix}"):
            if path.stem not in logs:
                path.unlink(missing_ok=True)


def load_segments(
    directory: Path,
    index_interval_bytes: int,
    max_batch_bytes: int,
    clean: bool,
    recovery_point: int,
) -> tuple[list[LogSegment], RecoveryStats]:
    stats = RecoveryStats(clean_shutdown=clean)
    bases = sorted(int(p.stem) for p in directory.glob(f"*{LOG_SUFFIX}") if p.stem.isdigit())
    segments: list[LogSegment] = []
    truncated_at: int | None = None
    for i, base in enumerate(bases):
        segment = LogSegment(directory, base, index_interval_bytes)
        if truncated_at is not None or (segments and base != segments[-1].next_offset):
            # After a truncation (or a gap in the chain) nothing later can be trusted.
            segment.close()
            for path in (segment.log_path, segment.index.path, segment.time_index.path):
                path.unlink(missing_ok=True)
            stats.segments_deleted += 1
            truncated_at = truncated_at if truncated_at is not None else base
            continue
        next_base = bases[i + 1] if i + 1 < len(bases) else None
        needs_recovery = not clean and (next_base is None or next_base > recovery_point)
        if needs_recovery:
            cut = segment.recover(max_batch_bytes)
            stats.segments_recovered += 1
            stats.bytes_truncated += cut
            if cut:
                truncated_at = segment.next_offset
        else:
            segment.load_trusted(max_batch_bytes)
        if segments:
            segments[-1].seal()
        segments.append(segment)
        stats.segments_loaded += 1
    return segments, stats
