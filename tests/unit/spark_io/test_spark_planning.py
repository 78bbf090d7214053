"""Planning a read: offsets resolved against log starts and high watermarks, ranges split
into Spark partitions, and micro-batches limited. Pure functions, no cluster, no Spark."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rillet.client.types import TopicPartition
from rillet.spark_io.errors import DataLossError, OptionError
from rillet.spark_io.offset_spec import EARLIEST, LATEST, OffsetSpec
from rillet.spark_io.planning import Bounds, OffsetRange, limit_ranges, plan, split_ranges

A0, A1 = TopicPartition("a", 0), TopicPartition("a", 1)
BOUNDS = {A0: Bounds(10, 100), A1: Bounds(0, 50)}


def offsets(default: int, **per: int) -> OffsetSpec:
    return OffsetSpec(
        "offsets", {TopicPartition("a", int(k[1:])): v for k, v in per.items()}, default=default
    )


def test_earliest_to_latest_is_log_start_to_high_watermark() -> None:
    p = plan(BOUNDS, BOUNDS, OffsetSpec.earliest(), OffsetSpec.latest())
    assert p.ranges == [OffsetRange("a", 0, 10, 100), OffsetRange("a", 1, 0, 50)]
    assert p.warnings == []


def test_specific_offsets_with_defaults_for_unlisted_partitions() -> None:
    p = plan(
        BOUNDS,
        BOUNDS,
        offsets(EARLIEST, p0=20),
        offsets(LATEST, p0=30, p1=LATEST),
    )
    assert p.ranges == [OffsetRange("a", 0, 20, 30), OffsetRange("a", 1, 0, 50)]


def test_an_end_above_the_high_watermark_is_refused() -> None:
    with pytest.raises(OptionError, match=r"only offsets below 100 are committed"):
        plan(BOUNDS, BOUNDS, OffsetSpec.earliest(), offsets(LATEST, p0=101))


def test_a_start_before_the_log_start_is_data_loss() -> None:
    with pytest.raises(DataLossError, match=r"offsets 5..9 were requested but are gone"):
        plan(BOUNDS, BOUNDS, offsets(EARLIEST, p0=5), OffsetSpec.latest())
    p = plan(BOUNDS, BOUNDS, offsets(EARLIEST, p0=5), OffsetSpec.latest(), fail_on_data_loss=False)
    assert p.ranges[0] == OffsetRange("a", 0, 10, 100)
    assert "skipped" in p.warnings[0]


def test_a_start_past_the_end_is_data_loss() -> None:
    with pytest.raises(DataLossError, match=r"start offset 60 is past the end 50"):
        plan(BOUNDS, BOUNDS, offsets(EARLIEST, p1=60), OffsetSpec.latest())
    p = plan(BOUNDS, BOUNDS, offsets(EARLIEST, p1=60), OffsetSpec.latest(), fail_on_data_loss=False)
    assert p.ranges[1] == OffsetRange("a", 1, 50, 50)


def test_timestamps_resolve_through_the_lookup() -> None:
    spec = OffsetSpec("timestamps", {A0: 1234}, default=EARLIEST)
    p = plan(BOUNDS, BOUNDS, spec, OffsetSpec.latest(), start_times={A0: 42})
    assert p.ranges[0].start == 42 and p.ranges[1].start == 0  # a1 takes the default
    with pytest.raises(OptionError, match=r"no committed record of a-0 .* at or after 1234"):
        plan(BOUNDS, BOUNDS, spec, OffsetSpec.latest(), start_times={A0: None})
    p = plan(BOUNDS, BOUNDS, spec, OffsetSpec.latest(), start_times={A0: None}, strategy="latest")
    assert p.ranges[0].start == 100
    end = OffsetSpec("timestamp", timestamp=99, default=LATEST)
    p = plan(BOUNDS, BOUNDS, OffsetSpec.earliest(), end, end_times={A0: 70, A1: None})
    assert [r.end for r in p.ranges] == [70, 50]  # nothing after the time: read to the end


def test_split_by_max_records() -> None:
    pieces = split_ranges([OffsetRange("a", 0, 0, 10)], max_records_per_partition=3)
    assert [(r.start, r.end) for r in pieces] == [(0, 3), (3, 6), (6, 8), (8, 10)]


def test_split_for_min_partitions_cuts_large_ranges_only() -> None:
    ranges = [OffsetRange("a", 0, 0, 1000), OffsetRange("a", 1, 0, 10)]
    pieces = split_ranges(ranges, min_partitions=4)
    assert len(pieces) >= 4
    assert [r for r in pieces if r.partition == 1] == [OffsetRange("a", 1, 0, 10)]


def test_empty_ranges_make_no_partitions() -> None:
    assert split_ranges([OffsetRange("a", 0, 5, 5)], min_partitions=3) == []


range_lists = st.lists(
    st.tuples(st.integers(0, 1000), st.integers(0, 5000)), min_size=1, max_size=8
).map(lambda xs: [OffsetRange("t", i, s, s + n) for i, (s, n) in enumerate(xs)])


@given(
    range_lists,
    st.one_of(st.none(), st.integers(1, 64)),
    st.one_of(st.none(), st.integers(1, 2000)),
)
def test_splitting_covers_every_offset_exactly_once(
    ranges: list[OffsetRange], min_partitions: int | None, max_records: int | None
) -> None:
    pieces = split_ranges(ranges, min_partitions, max_records)
    for r in ranges:
        mine = [p for p in pieces if p.partition == r.partition]
        if r.size == 0:
            assert mine == []
            continue
        assert mine[0].start == r.start and mine[-1].end == r.end
        assert all(a.end == b.start for a, b in itertools.pairwise(mine))
        assert all(p.size > 0 for p in mine)
        if max_records is not None:
            assert all(p.size <= max_records for p in mine)
    total = sum(r.size for r in ranges)
    non_empty = sum(1 for r in ranges if r.size)
    if min_partitions is not None and non_empty and total >= min_partitions:
        assert len(pieces) >= min_partitions


@given(range_lists, st.integers(1, 20000))
def test_limits_share_the_budget_and_never_exceed_it(
    ranges: list[OffsetRange], max_records: int
) -> None:
    limited = limit_ranges(ranges, max_records)
    total = sum(r.size for r in ranges)
    assert sum(r.size for r in limited) == min(total, max_records)
    for before, after in zip(sorted(ranges), limited, strict=True):
        assert after.start == before.start and before.start <= after.end <= before.end
        if total > max_records:  # proportional, within one record
            assert abs(after.size - before.size * max_records / total) < 1 + 1e-9
