"""Log compaction on real files: latest value per key, offsets kept, tombstones expire,
replicas clean to the same bytes, and a crash between any two steps of a clean loses
nothing."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from log_rows import latest_per_key, read_all
from store_batches import T0, crash

from rillet.partition_store.cleaner_swap import commit_swap, finish_swap
from rillet.partition_store.cleaning_pass import clean_now, plan_for, work
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.partition_store.segment_cleaner import IoBudget
from rillet.wire.batch import build_batch, decode_records, iter_batches

KEYS = 10
RETENTION_MS = 60_000


def compacted(directory: Path) -> PartitionLog:
    config = LogConfig(
        segment_bytes=2048, cleanup_policy="compact", delete_retention_ms=RETENTION_MS
    )
    return PartitionLog.open(directory, config, T0, "t", 0)


def write(
    log: PartitionLog,
    start: int,
    count: int,
    tombstone_for: bytes | None = None,
    skip: bytes | None = None,
) -> None:
    """Overwrites of KEYS keys (the i-th writes key i % KEYS); tombstones for one key if
    asked, nothing for ``skip``."""
    for i in range(start, start + count):
        key = f"k{i % KEYS}".encode()
        if key == skip:
            continue
        value = None if key == tombstone_for else f"v{i}".encode()
        log.append_as_leader(build_batch([(T0 + i, key, value, None)]), 0, T0 + i)


def test_clean_keeps_latest_value_per_key_with_original_offsets(tmp_path: Path) -> None:
    log = compacted(tmp_path / "t-0")
    write(log, 0, 300)
    before = read_all(log)
    result = clean_now(log, T0 + 1000)
    assert result is not None and result.stats.records_dropped > 0
    after = read_all(log)
    assert latest_per_key(after) == latest_per_key(before)
    cleaned_end = log.first_dirty_offset
    cleaned = [row for row in after if row[0] < cleaned_end]
    assert len({row[1] for row in cleaned}) == len(cleaned)  # one record per key
    assert set(after) <= set(before)  # every row kept with its original offset
    assert log.size_bytes < sum(len(r[2] or b"") + 70 for r in before) // 4
    log.close()
    reopened = compacted(tmp_path / "t-0")
    assert read_all(reopened) == after
    assert reopened.recovery_stats.segments_trusted == len(reopened.segments())


def test_a_full_key_map_cleans_in_several_steps(tmp_path: Path) -> None:
    log = compacted(tmp_path / "t-0")
    write(log, 0, 300)
    before = read_all(log)
    first = clean_now(log, T0 + 1000, map_max_bytes=1)  # one dirty segment per clean
    assert first is not None and len(first.staged) == 1
    assert log.first_dirty_offset == first.dirty_end < log.active_segment.base_offset
    while clean_now(log, T0 + 1000, map_max_bytes=1) is not None:
        pass
    assert log.first_dirty_offset == log.active_segment.base_offset
    assert latest_per_key(read_all(log)) == latest_per_key(before)


def test_fetch_inside_a_cleaned_gap_starts_at_the_gap(tmp_path: Path) -> None:
    log = compacted(tmp_path / "t-0")
    write(log, 0, 300)
    clean_now(log, T0 + 1000)
    data = log.read_bytes(5, 1 << 20)  # offset 5 was overwritten and cleaned away
    first = next(iter_batches(data, 1 << 31)).header
    assert first.record_count == 0 and first.base_offset <= 5 < first.next_offset
    offset, records = 5, []
    while not records:  # a consumer moves past empty batches to the next record
        data = log.read_bytes(offset, 1 << 20)
        views = list(iter_batches(data, 1 << 31))
        records = [r for v in views for r in decode_records(data, v.position)]
        offset = views[-1].header.next_offset
    assert records[0].offset > 5


def test_tombstones_stay_for_delete_retention_then_go(tmp_path: Path) -> None:
    log = compacted(tmp_path / "t-0")
    write(log, 0, 300, tombstone_for=b"k3")
    log.roll(T0 + 300)  # the last tombstone is cleaned (and its horizon set) now:
    clean_now(log, T0 + 1000)
    assert latest_per_key(read_all(log))[b"k3"][2] is None  # the tombstone is readable
    write(log, 300, 300, skip=b"k3")  # more overwrites make the log dirty again
    log.roll(T0 + 700)
    clean_now(log, T0 + 1000 + RETENTION_MS - 1)
    assert latest_per_key(read_all(log))[b"k3"][2] is None  # still inside its horizon
    write(log, 600, 300, skip=b"k3")
    log.roll(T0 + 1000)
    result = clean_now(log, T0 + 1000 + RETENTION_MS)
    assert result is not None and result.stats.tombstones_dropped >= 1
    keys = {row[1] for row in read_all(log) if row[0] < log.first_dirty_offset}
    assert b"k3" not in keys


def test_two_replicas_clean_to_identical_bytes(tmp_path: Path) -> None:
    leader = compacted(tmp_path / "a" / "t-0")
    follower = compacted(tmp_path / "b" / "t-0")
    write(leader, 0, 400, tombstone_for=b"k7")
    offset = 0
    while offset < leader.log_end_offset:  # replicate batch by batch, as a fetch would
        data = leader.read_bytes(offset, 1)
        follower.append_as_follower(data, T0)
        offset = follower.log_end_offset
    for log in (leader, follower):
        assert clean_now(log, T0 + 5000) is not None
    assert [s.base_offset for s in leader.segments()] == [
        s.base_offset for s in follower.segments()
    ]
    for a, b in zip(leader.segments(), follower.segments(), strict=True):
        assert a.log_path.read_bytes() == b.log_path.read_bytes()
    # A follower that starts after the clean copies the gaps as empty batches.
    late = compacted(tmp_path / "c" / "t-0")
    while late.log_end_offset < leader.log_end_offset:
        late.append_as_follower(leader.read_bytes(late.log_end_offset, 1 << 20), T0)
    assert read_all(late) == read_all(leader)


def _retire_sources(log: PartitionLog, count: int) -> Callable[[int], None]:
    def retire(base: int) -> None:
        commit_swap(log.directory, base)
        for segment in [s for s in log._segments if s.base_offset >= base][:count]:
            log._deletions.schedule(segment, T0)

    return retire


def _finish_after_retiring(log: PartitionLog, count: int) -> Callable[[int], None]:
    def finish(base: int) -> None:
        _retire_sources(log, count)(base)
        finish_swap(log.directory, base)

    return finish


@pytest.mark.parametrize(
    "stop_after", ["staged", "committed", "one_retired", "all_retired", "finished"]
)
def test_a_crash_between_any_two_steps_loses_nothing(tmp_path: Path, stop_after: str) -> None:
    log = compacted(tmp_path / "t-0")
    write(log, 0, 300, tombstone_for=b"k2")
    before = read_all(log)
    plan = plan_for(log, T0 + 1000, log.log_end_offset)
    assert plan is not None
    job = log.clean_job(plan, 1 << 20)
    assert job is not None
    result = work(job, IoBudget(-1))
    staged = result.staged[0]
    steps: dict[str, Callable[[int], None]] = {
        "staged": lambda base: None,
        "committed": lambda base: commit_swap(log.directory, base),
        "one_retired": _retire_sources(log, 1),
        "all_retired": _retire_sources(log, len(staged.sources)),
        "finished": _finish_after_retiring(log, len(staged.sources)),
    }
    steps[stop_after](staged.base_offset)
    crash(log)
    reopened = compacted(tmp_path / "t-0")
    rows = read_all(reopened)
    assert latest_per_key(rows) == latest_per_key(before)
    assert set(rows) <= set(before)
    assert reopened.log_end_offset == log.log_end_offset
    if stop_after != "staged":
        assert reopened.recovery_stats.swaps_completed == (stop_after != "finished")
        assert len(rows) < len(before)  # the committed clean was finished
    assert not list(reopened.directory.glob("*.swap"))
    assert not (reopened.directory / "cleaner-staging").exists()


def test_a_cleaned_segment_keeps_its_sources_last_write(tmp_path: Path) -> None:
    """Time retention counts from a segment's last write (the .log mtime): a clean must not
    restart that clock, or a compact,delete log cleaned often would never expire."""
    directory = tmp_path / "t-0"
    log = compacted(directory)
    write(log, 0, 300)
    written_ns = (T0 - 5000) * 1_000_000
    for path in directory.glob("*.log"):
        os.utime(path, ns=(written_ns, written_ns))
    assert clean_now(log, T0 + 1000) is not None
    sealed = log.segments()[:-1]
    assert sealed and {s.last_written_ms for s in sealed} == {T0 - 5000}
