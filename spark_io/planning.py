"""Planning a read: from options and what the cluster says to offset ranges, and ranges to
Spark partitions. Pure functions, no I/O (cluster_view.py asks the cluster).

A plan is fixed once: every partition's end is the high watermark (or an explicit end below
it) at planning time, so one job reads one consistent, committed range, whatever is produced
while it runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rillet.client.types import TopicPartition
from rillet.spark_io.errors import DataLossError, OptionError
from rillet.spark_io.offset_spec import EARLIEST, LATEST, OffsetSpec


@dataclass(frozen=True, slots=True, order=True)
class OffsetRange:
    """Records ``start <= offset < end`` of one partition."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    @property
    def size(self) -> int:
        return max(self.end - self.start, 0)


@dataclass(frozen=True, slots=True)
class Bounds:
    """A partition's log start and high watermark as the cluster answered at planning."""

    log_start: int
    high_watermark: int


@dataclass(slots=True)
class Plan:
    ranges: list[OffsetRange]
    warnings: list[str] = field(default_factory=list)

    def ends(self) -> dict[TopicPartition, int]:
        return {r.tp: r.end for r in self.ranges}

    def starts(self) -> dict[TopicPartition, int]:
        return {r.tp: r.start for r in self.ranges}


def _name(tp: TopicPartition) -> str:
    return f"{tp.topic}-{tp.partition}"


def resolve_start(
    tp: TopicPartition,
    spec: OffsetSpec,
    bounds: Bounds,
    found_by_time: Mapping[TopicPartition, int | None],
    strategy: str,
) -> int:
    """The first offset to read for ``tp`` (may be below the log start: see ``plan``)."""
    if spec.kind == "earliest":
        return bounds.log_start
    if spec.kind == "latest":
        return bounds.high_watermark
    if spec.kind == "offsets" or (spec.kind == "timestamps" and tp not in spec.per_partition):
        value = spec.per_partition.get(tp, spec.default)
        if value == EARLIEST:
            return bounds.log_start
        if value == LATEST:
            return bounds.high_watermark
        return value
    found = found_by_time.get(tp)
    if found is not None:
        return found
    when = spec.timestamp if spec.kind == "timestamp" else spec.per_partition[tp]
    if strategy == "latest":
        return bounds.high_watermark
    raise OptionError(
        f"no committed record of {_name(tp)} has a timestamp at or after {when}; set "
        "startingOffsetsByTimestampStrategy=latest to start at the end instead"
    )


def resolve_end(
    tp: TopicPartition,
    spec: OffsetSpec,
    bounds: Bounds,
    found_by_time: Mapping[TopicPartition, int | None],
) -> int:
    """The offset after the last record to read for ``tp``: never above the high watermark."""
    hw = bounds.high_watermark
    if spec.kind == "latest":
        return hw
    if spec.kind == "offsets" or (spec.kind == "timestamps" and tp not in spec.per_partition):
        value = spec.per_partition.get(tp, spec.default)
        if value == LATEST:
            return hw
        if value > hw:
            raise OptionError(
                f"endingOffsets asks for {_name(tp)} up to offset {value}, but only offsets "
                f"below {hw} are committed (the high watermark); use -1 (latest) or a "
                "smaller offset"
            )
        return value
    found = found_by_time.get(tp)
    return hw if found is None else found  # nothing at or after that time: read to the end


def plan(
    partitions: Iterable[TopicPartition],
    bounds: Mapping[TopicPartition, Bounds],
    starting: OffsetSpec,
    ending: OffsetSpec,
    *,
    start_times: Mapping[TopicPartition, int | None] | None = None,
    end_times: Mapping[TopicPartition, int | None] | None = None,
    strategy: str = "error",
    fail_on_data_loss: bool = True,
) -> Plan:
    """One offset range per partition; raises DataLossError (or warns, when
    ``fail_on_data_loss`` is false) where the range cannot be read as asked."""
    out = Plan([])
    for tp in sorted(partitions):
        b = bounds[tp]
        start = resolve_start(tp, starting, b, start_times or {}, strategy)
        end = resolve_end(tp, ending, b, end_times or {})
        if start < b.log_start:
            message = (
                f"{_name(tp)}: offsets {start}..{b.log_start - 1} were requested but are "
                f"gone (the log now starts at {b.log_start}: deleted by retention, or the "
                "topic was recreated)"
            )
            if fail_on_data_loss:
                raise DataLossError(message + "; set failOnDataLoss=false to skip them")
            out.warnings.append(message + "; skipped (failOnDataLoss=false)")
            start = b.log_start
        if start > end:
            message = (
                f"{_name(tp)}: the start offset {start} is past the end {end} (high watermark "
                f"{b.high_watermark}): the offsets do not exist, or the topic was recreated"
            )
            if fail_on_data_loss:
                raise DataLossError(message + "; set failOnDataLoss=false to read nothing here")
            out.warnings.append(message + "; nothing read (failOnDataLoss=false)")
            start = end
        out.ranges.append(OffsetRange(tp.topic, tp.partition, start, end))
    return out


def _split_even(r: OffsetRange, pieces: int) -> list[OffsetRange]:
    """``r`` cut into ``pieces`` contiguous ranges whose sizes differ by at most one."""
    pieces = max(1, min(pieces, r.size))
    base, extra = divmod(r.size, pieces)
    out = []
    start = r.start
    for i in range(pieces):
        end = start + base + (1 if i < extra else 0)
        out.append(OffsetRange(r.topic, r.partition, start, end))
        start = end
    return out


def split_ranges(
    ranges: Iterable[OffsetRange],
    min_partitions: int | None = None,
    max_records_per_partition: int | None = None,
) -> list[OffsetRange]:
    """Spark partitions for ``ranges``: empty ranges dropped; each range cut into pieces of
    at most ``max_records_per_partition`` records; then, while there are fewer pieces than
    ``min_partitions``, the records are spread so that there are at least that many (large
    ranges are cut, small ones kept whole, as Spark's Kafka source does). Pieces of one
    partition stay contiguous, in offset order, and cover exactly the input."""
    pieces: list[OffsetRange] = []
    for r in ranges:
        if r.size == 0:
            continue
        if max_records_per_partition is not None and r.size > max_records_per_partition:
            pieces += _split_even(r, math.ceil(r.size / max_records_per_partition))
        else:
            pieces.append(r)
    if min_partitions is not None and 0 < len(pieces) < min_partitions:
        total = sum(p.size for p in pieces)
        if total > len(pieces):
            share = total / min_partitions
            pieces = [q for p in pieces for q in _split_even(p, math.ceil(p.size / share))]
    return sorted(pieces)


def limit_ranges(ranges: Iterable[OffsetRange], max_records: int) -> list[OffsetRange]:
    """Cut the ends of ``ranges`` so that they hold at most ``max_records`` in total, shared
    in proportion to each range's size (largest remainders get the records that rounding
    down leaves): ``maxOffsetsPerTrigger``. Every range is returned, possibly emptied."""
    items = sorted(ranges)
    total = sum(r.size for r in items)
    if total <= max_records:
        return items
    takes = [r.size * max_records // total for r in items]
    spare = max_records - sum(takes)
    by_remainder = sorted(
        range(len(items)), key=lambda i: items[i].size * max_records % total, reverse=True
    )
    for i in by_remainder:
        if spare == 0:
            break
        if takes[i] < items[i].size:
            takes[i] += 1
            spare -= 1
    return [
        OffsetRange(r.topic, r.partition, r.start, r.start + take)
        for r, take in zip(items, takes, strict=True)
    ]
