"""Micro-batch planning for ``spark.readStream.format("rillet")``, without Spark.

Spark keeps a stream's progress as offsets JSON, ``{"topic": {"0": 42, "1": 7}}``: the next
offset to read per partition, as in Spark's Kafka source. Each trigger asks for the latest
offsets (the high watermarks, so only committed records are ever planned), cut down by
``maxOffsetsPerTrigger`` in proportion to each partition's backlog, or by the target fixed by
``Trigger.AvailableNow`` (the high watermarks when the query started: records produced later
wait for the next run). Partitions that appear later (new partitions, or new topics matching
a pattern) are read from their log start.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from rillet.client.types import TopicPartition
from rillet.spark_io.errors import DataLossError
from rillet.spark_io.offset_spec import OffsetSpec
from rillet.spark_io.options import ReadOptions
from rillet.spark_io.planning import Bounds, OffsetRange, Plan, limit_ranges, plan, split_ranges

log = logging.getLogger(__name__)

Offsets = dict[TopicPartition, int]


def _name(tp: TopicPartition) -> str:
    return f"{tp.topic}-{tp.partition}"


class StreamPlanner:
    """The decisions of a stream reader; the caller supplies what the cluster says."""

    def __init__(self, opts: ReadOptions) -> None:
        self.opts = opts
        self.target: Offsets | None = None  # Trigger.AvailableNow: never read past these
        self.latest_seen: Offsets = {}

    def _loss(self, message: str, warnings: list[str]) -> None:
        if self.opts.fail_on_data_loss:
            raise DataLossError(message + "; set failOnDataLoss=false to go on without them")
        warnings.append(message)
        log.warning("%s (failOnDataLoss=false)", message)

    def initial(
        self,
        bounds: Mapping[TopicPartition, Bounds],
        start_times: Mapping[TopicPartition, int | None],
    ) -> Offsets:
        """Where a new query starts (startingOffsets; default latest)."""
        result = plan(
            bounds,
            bounds,
            self.opts.starting,
            OffsetSpec.latest(),
            start_times=start_times,
            strategy=self.opts.starting_timestamp_strategy,
            fail_on_data_loss=self.opts.fail_on_data_loss,
        )
        return result.starts()

    def prepare_available_now(self, bounds: Mapping[TopicPartition, Bounds]) -> None:
        self.target = {tp: b.high_watermark for tp, b in bounds.items()}

    def latest(
        self,
        start: Offsets,
        bounds: Mapping[TopicPartition, Bounds],
        max_rows: int | None,
    ) -> tuple[Offsets, list[str]]:
        """The end of the next micro-batch (``start`` itself when there is nothing new)."""
        warnings: list[str] = []
        self.latest_seen = {tp: b.high_watermark for tp, b in bounds.items()}
        ends: Offsets = {}
        ranges: list[OffsetRange] = []
        for tp in sorted(set(start) | set(bounds)):
            b = bounds.get(tp)
            s = start.get(tp)
            if b is None:
                assert s is not None
                self._loss(f"{_name(tp)} no longer exists (its topic was deleted?)", warnings)
                continue
            if s is None:
                if self.target is not None and tp not in self.target:
                    continue  # appeared after Trigger.AvailableNow fixed its target
                s = b.log_start
            hw = b.high_watermark
            if self.target is not None:
                hw = min(hw, self.target.get(tp, hw))
            if hw < s:
                if b.high_watermark < s:
                    self._loss(
                        f"{_name(tp)}: the high watermark {b.high_watermark} is below the "
                        f"stream's position {s} (the topic was recreated, or records were "
                        "lost in an unclean leader change); continuing from it",
                        warnings,
                    )
                    ends[tp] = b.high_watermark
                else:
                    ends[tp] = s
                continue
            ranges.append(OffsetRange(tp.topic, tp.partition, s, hw))
        if max_rows is not None:
            ranges = limit_ranges(ranges, max_rows)
        for r in ranges:
            ends[r.tp] = r.end
        return ends, warnings

    def ranges(self, start: Offsets, end: Offsets, bounds: Mapping[TopicPartition, Bounds]) -> Plan:
        """The Spark partitions of the micro-batch ``[start, end)``."""
        out = Plan([])
        for tp, e in sorted(end.items()):
            b = bounds.get(tp)
            s = start.get(tp)
            if s is None:
                s = b.log_start if b is not None else 0
            if b is not None and s < b.log_start:
                message = (
                    f"{_name(tp)}: offsets {s}..{b.log_start - 1} were deleted before the "
                    "stream read them (retention)"
                )
                self._loss(message, out.warnings)
                s = min(b.log_start, e)
            if s >= e:
                continue
            out.ranges.append(OffsetRange(tp.topic, tp.partition, s, e))
        out.ranges = split_ranges(
            out.ranges, self.opts.min_partitions, self.opts.max_records_per_partition
        )
        return out
