"""The log's ordered segments: lookups by offset and the runs the log replaces."""

from __future__ import annotations

from pathlib import Path

import pytest

from rillet.partition_store.log_segments import LogSegments
from rillet.partition_store.segment import LogSegment


def segments(tmp_path: Path, bases: list[int]) -> LogSegments:
    return LogSegments([LogSegment(tmp_path, b, 4096, fresh=True) for b in bases])


def bases_of(segs: LogSegments) -> list[int]:
    return [s.base_offset for s in segs]


def test_lookups_by_offset(tmp_path: Path) -> None:
    segs = segments(tmp_path, [10, 20, 30])
    assert segs.holding(25).base_offset == 20
    assert segs.holding(30).base_offset == 30
    assert segs.holding(5).base_offset == 10  # below the first base: the first segment
    assert segs.index_holding(5) == -1
    assert bases_of(LogSegments(segs.from_holding(21))) == [20, 30]
    assert segs.at_base(20) is segs.at(1)
    assert segs.at_base(21) is None and segs.at_base(5) is None
    assert segs.active.base_offset == 30 and segs.first.base_offset == 10
    assert [s.base_offset for s in segs.sealed()] == [10, 20]
    assert segs.index_of_path(segs.at(2).paths.log) == 2
    assert segs.index_of_path(tmp_path / "nope.log") is None


def test_changes_keep_the_lookups_in_step(tmp_path: Path) -> None:
    segs = segments(tmp_path, [0, 10, 20, 30])
    assert bases_of(LogSegments(segs.cut_after(1))) == [20, 30]
    assert bases_of(segs) == [0, 10] and segs.holding(15).base_offset == 10
    segs.roll(LogSegment(tmp_path, 40, 4096, fresh=True))
    assert segs.holding(45).base_offset == 40
    # Retention never takes the active segment, however many are asked for.
    assert bases_of(LogSegments(segs.drop_first(9))) == [0, 10]
    assert bases_of(segs) == [40]


def test_a_cleaned_segment_replaces_its_sources(tmp_path: Path) -> None:
    segs = segments(tmp_path, [0, 10, 20, 30])
    index, run = segs.run_from(10, 2)
    assert index == 1 and [s.base_offset for s in run] == [10, 20]
    (tmp_path / "c").mkdir()  # its own directory: the source at 10 has the same names
    cleaned = LogSegment(tmp_path / "c", 10, 4096, fresh=True)
    segs.replace(index, len(run), cleaned)
    assert bases_of(segs) == [0, 10, 30] and segs.holding(25) is cleaned


def test_a_log_is_never_without_segments(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        LogSegments([])
    segs = segments(tmp_path, [0, 10])
    fresh = LogSegment(tmp_path, 50, 4096, fresh=True)
    segs.reset(fresh)
    assert bases_of(segs) == [50] and len(segs) == 1
