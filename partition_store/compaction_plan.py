"""Which segments the log cleaner rewrites, and which records it keeps: the pure decisions.

Modelled on Kafka's LogCleaner / LogCleanerManager. A compacted log is split at the
*first dirty offset* (where the previous clean stopped) into a clean head and a dirty
tail. Only the *cleanable* part is ever touched:

- sealed segments only (never the active one, so appends never wait for the cleaner);
- wholly below the clean limit, ``min(high watermark, last stable offset)``: nothing a
  follower may still truncate, nothing of an open transaction;
- whose largest timestamp is at least ``min_compaction_lag_ms`` old.

A clean runs when the dirty share of the cleanable bytes reaches
``min_cleanable_dirty_ratio``, or when the oldest dirty record has waited
``max_compaction_lag_ms``. It builds a key -> latest offset map over the dirty part and
rewrites every cleanable segment from the log start to the dirty end, grouped so that a
group fits in one segment; the dirty end becomes the next first dirty offset.

Per record (:func:`keep_record`): a record is dropped when a later record of its key lies in
the dirty part; a tombstone (null value) is kept until ``delete_retention_ms`` after the
clean that first saw it (the *delete horizon*, written into its batch as Kafka's KIP-534
does), then dropped. Records without a key are kept (a compacted topic refuses them on
produce; older ones are never silently lost).

Everything here takes summaries, config and ``now_ms`` and returns decisions; the file work
is ``segment_cleaner.py`` and the crash-safe swap ``cleaner_swap.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rillet.partition_store.config import LogConfig
from rillet.partition_store.layout import MAX_RELATIVE_OFFSET

NO_HORIZON = -1


@dataclass(frozen=True, slots=True)
class SegmentSummary:
    """What the plan needs of one segment (the last one given is the active segment)."""

    base_offset: int
    next_offset: int
    size_bytes: int
    max_timestamp_ms: int


@dataclass(frozen=True, slots=True)
class CleanLimits:
    """The offsets the cleaner must stay below, from the replica's state.

    ``last_stable_offset`` is the hook for transactions: the first offset of the oldest
    open transaction (None: no transactions, the high watermark alone bounds the clean).
    """

    log_start_offset: int
    high_watermark: int
    first_dirty_offset: int
    last_stable_offset: int | None = None

    @property
    def clean_limit(self) -> int:
        lso = self.last_stable_offset
        return self.high_watermark if lso is None else min(self.high_watermark, lso)


@dataclass(frozen=True, slots=True)
class CleanPlan:
    """Rewrite ``groups`` (base offsets of consecutive segments; each group becomes one
    segment named by its first base), with the key map built over
    ``[dirty_start, dirty_end)``; afterwards the first dirty offset is ``dirty_end``."""

    groups: tuple[tuple[int, ...], ...]
    dirty_start: int
    dirty_end: int
    dirty_ratio: float
    delete_horizon_ms: int  # a tombstone first cleaned now is kept until then
    now_ms: int


@dataclass(frozen=True, slots=True)
class CleanerLag:
    """A log's standing for the cleaner's metrics."""

    dirty_ratio: float
    dirty_bytes: int
    cleanable_bytes: int


def cleanable_segments(
    segments: Sequence[SegmentSummary], config: LogConfig, limits: CleanLimits, now_ms: int
) -> list[SegmentSummary]:
    """The longest prefix of sealed segments the cleaner may rewrite now."""
    out: list[SegmentSummary] = []
    for segment in segments[:-1]:  # never the active segment
        if segment.next_offset > limits.clean_limit:
            break
        lag_ms = config.min_compaction_lag_ms
        if lag_ms > 0 and now_ms - segment.max_timestamp_ms < lag_ms:
            break
        if segment.next_offset <= limits.log_start_offset:
            continue  # retention removes it
        out.append(segment)
    return out


def cleaner_lag(
    segments: Sequence[SegmentSummary], config: LogConfig, limits: CleanLimits, now_ms: int
) -> CleanerLag:
    cleanable = cleanable_segments(segments, config, limits, now_ms)
    total = sum(s.size_bytes for s in cleanable)
    dirty = sum(s.size_bytes for s in cleanable if s.next_offset > limits.first_dirty_offset)
    return CleanerLag(dirty / total if total else 0.0, dirty, total)


def plan_clean(
    segments: Sequence[SegmentSummary],
    config: LogConfig,
    limits: CleanLimits,
    now_ms: int,
    first_dirty_timestamp_ms: int | None = None,
) -> CleanPlan | None:
    """What to clean now, or None. ``first_dirty_timestamp_ms`` (the first dirty batch's
    timestamp) lets ``max_compaction_lag_ms`` force a clean below the dirty ratio."""
    if not config.compacted:
        return None
    cleanable = cleanable_segments(segments, config, limits, now_ms)
    dirty = [s for s in cleanable if s.next_offset > limits.first_dirty_offset]
    if not dirty:
        return None
    lag = cleaner_lag(segments, config, limits, now_ms)
    overdue = (
        first_dirty_timestamp_ms is not None
        and now_ms - first_dirty_timestamp_ms >= config.max_compaction_lag_ms
    )
    if lag.dirty_ratio < config.min_cleanable_dirty_ratio and not overdue:
        return None
    return CleanPlan(
        groups=group_segments(cleanable, config.segment_bytes),
        dirty_start=max(limits.first_dirty_offset, dirty[0].base_offset),
        dirty_end=dirty[-1].next_offset,
        dirty_ratio=lag.dirty_ratio,
        delete_horizon_ms=now_ms + config.delete_retention_ms,
        now_ms=now_ms,
    )


def group_segments(
    segments: Sequence[SegmentSummary], max_bytes: int
) -> tuple[tuple[int, ...], ...]:
    """Consecutive segments merged while their sizes fit ``max_bytes`` (the cleaned group
    is never larger than its sources) and their offsets one segment's index."""
    groups: list[list[SegmentSummary]] = []
    for segment in segments:
        current = groups[-1] if groups else None
        if (
            current is not None
            and sum(s.size_bytes for s in current) + segment.size_bytes <= max_bytes
            and segment.next_offset - 1 - current[0].base_offset <= MAX_RELATIVE_OFFSET
        ):
            current.append(segment)
        else:
            groups.append([segment])
    return tuple(tuple(s.base_offset for s in g) for g in groups)


def should_roll_active(
    active: SegmentSummary, first_append_ms: int, config: LogConfig, now_ms: int
) -> bool:
    """A compacted log's active segment is sealed (so it can be cleaned) once its first
    append is ``min(segment_ms, max_compaction_lag_ms)`` old, even with no new appends."""
    if not config.compacted or active.size_bytes == 0 or first_append_ms < 0:
        return False
    return now_ms - first_append_ms >= min(config.segment_ms, config.max_compaction_lag_ms)


def keep_record(
    key: bytes | None,
    offset: int,
    tombstone: bool,
    latest_offsets: dict[bytes, int],
    batch_horizon_ms: int,
    now_ms: int,
) -> bool:
    """Whether the cleaner keeps one record (see the module docstring)."""
    if key is None:
        return True
    latest = latest_offsets.get(key)
    if latest is not None and latest > offset:
        return False
    return not (tombstone and batch_horizon_ms != NO_HORIZON and now_ms >= batch_horizon_ms)
