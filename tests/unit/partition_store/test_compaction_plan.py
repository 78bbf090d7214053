"""The cleaner's pure decisions: which segments, when, and which records survive."""

from __future__ import annotations

import dataclasses

import pytest

from rillet.partition_store.batch_cleaning import BatchCleaner
from rillet.partition_store.compaction_plan import (
    CleanLimits,
    SegmentSummary,
    group_segments,
    keep_record,
    plan_clean,
    should_roll_active,
)
from rillet.partition_store.config import LogConfig
from rillet.wire.batch import (
    ATTR_DELETE_HORIZON,
    assign_offset_and_epoch,
    build_batch,
    check_batch,
    decode_records,
    encode_batch_from_payload,
    iter_batches,
    read_header,
)
from rillet.wire.errors import CorruptBatch

NOW = 1_000_000
COMPACT = LogConfig(cleanup_policy="compact", segment_bytes=1000)


def segments(*sizes: int, per: int = 10) -> list[SegmentSummary]:
    """Segments of ``per`` offsets each, the last one the active segment."""
    return [SegmentSummary(i * per, (i + 1) * per, s, NOW - 10) for i, s in enumerate(sizes)]


def limits(first_dirty: int, hw: int = 10**9, lso: int | None = None) -> CleanLimits:
    return CleanLimits(0, hw, first_dirty, lso)


def test_nothing_to_clean_for_a_delete_topic_or_without_dirty_bytes() -> None:
    segs = segments(100, 100, 100)
    assert plan_clean(segs, LogConfig(), limits(0), NOW) is None
    assert plan_clean(segs, COMPACT, limits(20), NOW) is None  # all sealed ones are clean


def test_the_dirty_ratio_decides_and_the_active_segment_is_never_cleaned() -> None:
    segs = segments(100, 100, 100, 100)
    plan = plan_clean(segs, COMPACT, limits(10), NOW)
    assert plan is not None
    assert (plan.dirty_start, plan.dirty_end) == (10, 30)  # not the active segment 30..40
    assert plan.dirty_ratio == pytest.approx(2 / 3)
    assert plan.groups == ((0, 10, 20),)
    assert plan_clean(segs, COMPACT, limits(20), NOW) is None  # 1/3 < 0.5


def test_max_compaction_lag_forces_a_clean_below_the_ratio() -> None:
    segs = segments(100, 100, 100, 100)
    config = dataclasses.replace(COMPACT, max_compaction_lag_ms=500)
    assert plan_clean(segs, config, limits(20), NOW, first_dirty_timestamp_ms=NOW - 499) is None
    assert plan_clean(segs, config, limits(20), NOW, first_dirty_timestamp_ms=NOW - 500)


def test_the_high_watermark_lso_and_min_lag_bound_the_clean() -> None:
    segs = segments(100, 100, 100, 100)
    for bound in (limits(0, hw=25), limits(0, lso=25)):
        plan = plan_clean(segs, COMPACT, bound, NOW)
        assert plan is not None and plan.dirty_end == 20
    young = dataclasses.replace(COMPACT, min_compaction_lag_ms=11)
    assert plan_clean(segs, young, limits(0), NOW) is None


def test_groups_fit_one_segment() -> None:
    segs = segments(400, 400, 400, 100, 900)
    assert group_segments(segs, 1000) == ((0, 10), (20, 30), (40,))


def test_a_quiet_compacted_log_rolls_its_active_segment() -> None:
    active = SegmentSummary(0, 5, 100, NOW)
    lagged = dataclasses.replace(COMPACT, max_compaction_lag_ms=1000)
    assert should_roll_active(active, NOW - 1000, lagged, NOW)
    assert not should_roll_active(active, NOW - 999, lagged, NOW)
    assert not should_roll_active(active, NOW - 10**9, LogConfig(), NOW)


def test_record_verdicts() -> None:
    latest = {b"a": 5}
    assert not keep_record(b"a", 4, False, latest, -1, NOW)  # overwritten later
    assert keep_record(b"a", 5, False, latest, -1, NOW)
    assert keep_record(b"b", 1, False, latest, -1, NOW)  # not in the dirty part
    assert keep_record(None, 1, False, latest, -1, NOW)  # no key: kept
    assert keep_record(b"a", 5, True, latest, -1, NOW)  # tombstone, no horizon yet
    assert keep_record(b"a", 5, True, latest, NOW + 1, NOW)
    assert not keep_record(b"a", 5, True, latest, NOW, NOW)  # horizon passed


def _placed(records: list[tuple[bytes, bytes | None]], base: int, epoch: int = 3) -> bytes:
    data = bytearray(build_batch([(NOW + i, k, v, None) for i, (k, v) in enumerate(records)]))
    assign_offset_and_epoch(data, 0, base, epoch)
    return bytes(data)


def test_cleaned_batches_keep_offsets_and_gaps_are_empty_batches() -> None:
    batches = [
        _placed([(b"a", b"1"), (b"b", b"2"), (b"a", b"3")], 0),
        _placed([(b"c", b"4"), (b"b", None)], 3),
        _placed([(b"a", b"5")], 5),
    ]
    cleaner = BatchCleaner({b"a": 5, b"b": 4, b"c": 3}, NOW, NOW + 100)
    out = b"".join([*cleaner.clean(batches), *cleaner.finish()])
    views = list(iter_batches(out, 1 << 20))
    spans = [(v.header.base_offset, v.header.next_offset, v.header.record_count) for v in views]
    assert spans == [(0, 3, 0), (3, 5, 2), (5, 6, 1)]  # one gap batch for offsets 0..2
    rows = [(r.offset, r.key, r.value) for v in views for r in decode_records(out, v.position)]
    assert rows == [(3, b"c", b"4"), (4, b"b", None), (5, b"a", b"5")]
    tombstone_batch = views[1].header
    assert tombstone_batch.attributes & ATTR_DELETE_HORIZON
    assert tombstone_batch.first_timestamp_ms == NOW + 100
    assert [r.timestamp_ms for r in decode_records(out, views[1].position)] == [NOW, NOW + 1]
    assert all(v.header.leader_epoch == 3 for v in views)
    assert cleaner.stats.records_dropped == 3
    # An unchanged batch is copied byte for byte.
    assert out[views[2].position :] == batches[2]


def test_an_empty_batch_must_be_a_bare_header() -> None:
    cleaner = BatchCleaner({b"a": 9}, NOW, NOW)
    gap = b"".join([*cleaner.clean([_placed([(b"a", b"1")], 0)]), *cleaner.finish()])
    assert read_header(gap).record_count == 0 and len(gap) == 61
    check_batch(gap, 0, len(gap), 1 << 20)
    for payload, last_delta in ((b"\x00", 0), (b"", -1)):  # records, or no offset at all
        bad = encode_batch_from_payload(
            payload,
            record_count=0,
            first_timestamp_ms=NOW,
            max_timestamp_ms=NOW,
            last_offset_delta=last_delta,
        )
        with pytest.raises(CorruptBatch, match="an empty batch is a bare header"):
            check_batch(bad, 0, len(bad), 1 << 20)
