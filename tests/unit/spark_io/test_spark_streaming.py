"""Micro-batch planning: offsets move to the high watermark, limited by maxOffsetsPerTrigger
or by the Trigger.AvailableNow target; new partitions start at their log start."""

from __future__ import annotations

import pytest

from rillet.client.types import TopicPartition
from rillet.spark_io.errors import DataLossError
from rillet.spark_io.options import parse_read_options
from rillet.spark_io.planning import Bounds, OffsetRange
from rillet.spark_io.streaming import StreamPlanner

A0, A1, A2 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("a", 2)


def planner(**options: str) -> StreamPlanner:
    opts = parse_read_options({"bootstrap": "h:1", "subscribe": "a", **options}, streaming=True)
    return StreamPlanner(opts)


def test_initial_offsets_default_to_latest_and_follow_starting_offsets() -> None:
    bounds = {A0: Bounds(0, 10), A1: Bounds(5, 7)}
    assert planner().initial(bounds, {}) == {A0: 10, A1: 7}
    assert planner(startingOffsets="earliest").initial(bounds, {}) == {A0: 0, A1: 5}
    p = planner(startingOffsets='{"a": {"0": 3}}')
    assert p.initial(bounds, {}) == {A0: 3, A1: 7}


def test_latest_reads_everything_committed_by_default() -> None:
    p = planner()
    end, warnings = p.latest({A0: 2, A1: 5}, {A0: Bounds(0, 10), A1: Bounds(5, 7)}, None)
    assert end == {A0: 10, A1: 7} and warnings == []
    assert p.latest_seen == {A0: 10, A1: 7}


def test_max_offsets_per_trigger_is_shared_by_backlog() -> None:
    p = planner()
    end, _ = p.latest({A0: 0, A1: 0}, {A0: Bounds(0, 300), A1: Bounds(0, 100)}, 40)
    assert end == {A0: 30, A1: 10}


def test_new_partitions_start_at_their_log_start() -> None:
    p = planner()
    end, _ = p.latest({A0: 10}, {A0: Bounds(0, 10), A1: Bounds(4, 9)}, None)
    assert end == {A0: 10, A1: 9}
    plan = p.ranges({A0: 10}, end, {A0: Bounds(0, 10), A1: Bounds(4, 9)})
    assert plan.ranges == [OffsetRange("a", 1, 4, 9)]


def test_available_now_stops_at_the_target() -> None:
    p = planner()
    p.prepare_available_now({A0: Bounds(0, 10), A1: Bounds(0, 5)})
    later = {A0: Bounds(0, 50), A1: Bounds(0, 50), A2: Bounds(0, 50)}
    end, _ = p.latest({A0: 0, A1: 0}, later, 8)
    assert sum(end.values()) == 8 and end[A0] <= 10 and end[A1] <= 5 and A2 not in end
    end, _ = p.latest({A0: 10, A1: 5}, later, None)
    assert end == {A0: 10, A1: 5}  # at the target: no new data, the query ends


def test_a_high_watermark_below_the_position_is_data_loss() -> None:
    with pytest.raises(DataLossError, match=r"below the stream's position 20"):
        planner().latest({A0: 20}, {A0: Bounds(0, 5)}, None)
    p = planner(failOnDataLoss="false")
    end, warnings = p.latest({A0: 20}, {A0: Bounds(0, 5)}, None)
    assert end == {A0: 5} and warnings


def test_a_vanished_partition_is_data_loss() -> None:
    with pytest.raises(DataLossError, match=r"a-1 no longer exists"):
        planner().latest({A0: 0, A1: 0}, {A0: Bounds(0, 5)}, None)
    end, _ = planner(failOnDataLoss="false").latest({A0: 0, A1: 0}, {A0: Bounds(0, 5)}, None)
    assert end == {A0: 5}


def test_ranges_detect_records_deleted_before_they_were_read() -> None:
    with pytest.raises(DataLossError, match=r"offsets 3..5 were deleted"):
        planner().ranges({A0: 3}, {A0: 10}, {A0: Bounds(6, 10)})
    plan = planner(failOnDataLoss="false").ranges({A0: 3}, {A0: 10}, {A0: Bounds(6, 10)})
    assert plan.ranges == [OffsetRange("a", 0, 6, 10)]


def test_ranges_are_split_like_batch_reads() -> None:
    plan = planner(maxRecordsPerPartition="4").ranges({A0: 0}, {A0: 10}, {A0: Bounds(0, 10)})
    assert [(r.start, r.end) for r in plan.ranges] == [(0, 4), (4, 7), (7, 10)]
