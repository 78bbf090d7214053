"""ListOffsets by time names the first record at or after the time, not its batch's start
(Kafka's answer; librdkafka's test 0054 checks it with two records in one batch)."""

from __future__ import annotations

from pathlib import Path

from store_batches import T0, batch, open_log

from rillet.partition_store.time_lookup import first_record_at_time, offset_for_time
from rillet.wire.batch import assign_offset_and_epoch, build_batch, stamp_log_append_time


def test_the_record_in_the_batch_not_the_batch_start(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(
        build_batch([(1234, None, b"a", None), (999999999999, None, b"b", None)]), 0, T0
    )
    log.append_as_leader(batch([b"c", b"d", b"e"], ts=T0, step=10), 0, T0)  # T0, +10, +20
    assert offset_for_time(log, 1234, 5) == (0, 1234)
    assert offset_for_time(log, 1235, 5) == (1, 999999999999)
    assert offset_for_time(log, 999999999999, 5) == (1, 999999999999)
    assert offset_for_time(log, T0 + 5, 5) == (3, T0 + 10)
    assert offset_for_time(log, T0 + 20, 5) == (4, T0 + 20)
    assert offset_for_time(log, T0 + 21, 5) is None


def test_nothing_at_or_above_the_high_watermark(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(batch([b"a", b"b", b"c"], ts=T0, step=10), 0, T0)
    assert offset_for_time(log, T0 + 10, 2) == (1, T0 + 10)
    assert offset_for_time(log, T0 + 11, 2) is None  # offset 2 is not committed yet
    assert offset_for_time(log, T0, 0) is None


def test_the_log_start_inside_a_batch_sends_the_search_on(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(batch([b"a", b"b", b"c"], ts=T0 + 50, step=-10), 0, T0)  # 50, 40, 30
    log.append_as_leader(batch([b"d"], ts=T0 + 45), 0, T0)
    log.advance_log_start_offset(1)
    assert offset_for_time(log, T0 + 35, 4) == (1, T0 + 40)
    assert offset_for_time(log, T0 + 41, 4) == (3, T0 + 45)  # 50 is below the log start


def test_log_append_time_names_the_first_record_after_the_start() -> None:
    data = bytearray(build_batch([(T0 + i, None, b"v", None) for i in (3, 9, 1)]))
    assign_offset_and_epoch(data, 0, 7, 0)
    assert first_record_at_time(bytes(data), T0 + 4, 0) == (8, T0 + 9)
    stamp_log_append_time(data, 0, T0 + 100)
    assert first_record_at_time(bytes(data), T0 + 4, 0) == (7, T0 + 100)
    assert first_record_at_time(bytes(data), T0 + 4, 8) == (8, T0 + 100)
    assert first_record_at_time(bytes(data), T0 + 101, 0) is None
