"""The cleaner's file work in a child process (broker/replica/clean_process.py), on real
files and real child processes: the same segments as the thread path; a child killed or
cancelled mid-clean, one that crashes, one that answers garbage, and a clean that fails in
the child all leave the log as it was, as a typed error, and the next clean succeeds."""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
from pathlib import Path

import pytest
import trio
from log_rows import Row, latest_per_key, read_all

from rillet.broker.replica.clean_process import clean_in_process, clean_now_in_process
from rillet.partition_store.cleaning_pass import clean_now, job_for
from rillet.partition_store.config import LogConfig
from rillet.partition_store.errors import CleanerProcessError, CorruptLog
from rillet.partition_store.log import PartitionLog
from rillet.partition_store.segment_cleaner import CleanJob, CleanResult, staging_dir
from rillet.wire.batch import build_batch

T0 = 1_700_000_000_000
KEYS = 10
SLOW_BYTES_PER_S = 75_000  # a clean of the log below takes over a second at this pace


def compacted(directory: Path) -> PartitionLog:
    config = LogConfig(segment_bytes=8192, cleanup_policy="compact")
    return PartitionLog.open(directory, config, T0, "t", 0)


def filled(directory: Path, count: int = 300) -> PartitionLog:
    """Overwrites of KEYS keys, a tombstone for one of them, in sealed 8 KiB segments."""
    log = compacted(directory)
    for i in range(count):
        key = f"k{i % KEYS}".encode()
        value = None if key == b"k3" else f"value-{i:06d}".encode() * 4
        log.append_as_leader(build_batch([(T0 + i, key, value, None)]), 0, T0 + i)
    log.roll(T0 + count)
    return log


def segment_files(log: PartitionLog) -> dict[str, bytes]:
    """Every file of the partition directory by name (not the staging directory's)."""
    return {p.name: p.read_bytes() for p in sorted(log.directory.iterdir()) if p.is_file()}


def job_of(log: PartitionLog) -> CleanJob:
    job = job_for(log, T0 + 10_000)
    assert job is not None
    return job


def without_durations(result: CleanResult | None) -> CleanResult:
    assert result is not None
    return dataclasses.replace(result, durations_s={})


async def staged_log_appears(job: CleanJob) -> None:
    """Until the child writes its first cleaned segment (mid-clean), 10 s at most."""
    with trio.fail_after(10):
        while not any(staging_dir(job.directory).glob("*.log")):
            await trio.sleep(0.005)


async def assert_next_clean_succeeds(log: PartitionLog, before: list[Row]) -> None:
    result = await clean_now_in_process(log, T0 + 10_000)
    assert result is not None and result.staged and result.stats.records_dropped > 0
    after = read_all(log)
    assert latest_per_key(after) == latest_per_key(before)
    assert set(after) <= set(before)


async def test_the_child_writes_the_same_segments_as_the_thread(tmp_path: Path) -> None:
    by_thread, by_child = filled(tmp_path / "a" / "t-0"), filled(tmp_path / "b" / "t-0")
    assert segment_files(by_thread) == segment_files(by_child)
    thread_result = clean_now(by_thread, T0 + 10_000)
    child_result = await clean_now_in_process(by_child, T0 + 10_000, niceness=10)
    assert without_durations(child_result) == without_durations(thread_result)
    assert by_child.size_bytes < by_child.log_end_offset * 30
    assert segment_files(by_child) == segment_files(by_thread)
    assert read_all(by_child) == read_all(by_thread)


async def test_a_child_killed_mid_clean_changes_nothing(tmp_path: Path) -> None:
    log = filled(tmp_path / "t-0")
    before, files = read_all(log), segment_files(log)
    job = job_of(log)
    async with trio.open_nursery() as nursery:

        async def clean(task_status: trio.TaskStatus[trio.Process]) -> None:
            with pytest.raises(CleanerProcessError, match="killed by SIGKILL"):
                await clean_in_process(job, SLOW_BYTES_PER_S, 0, task_status=task_status)

        child = await nursery.start(clean)
        await staged_log_appears(job)
        os.kill(child.pid, signal.SIGKILL)
    assert segment_files(log) == files
    await assert_next_clean_succeeds(log, before)


async def test_a_cancelled_clean_kills_the_child_at_once(tmp_path: Path) -> None:
    log = filled(tmp_path / "t-0")
    before, files = read_all(log), segment_files(log)
    job = job_of(log)
    async with trio.open_nursery() as nursery:
        child = await nursery.start(clean_in_process, job, SLOW_BYTES_PER_S, 0)
        await staged_log_appears(job)
        cancelled_at = trio.current_time()
        nursery.cancel_scope.cancel()
    assert trio.current_time() - cancelled_at < 3.0  # trio's default: SIGTERM, SIGKILL 5 s later
    assert child.returncode == -signal.SIGKILL
    assert segment_files(log) == files
    log.close()  # a shutdown: the next start drops what the child staged
    reopened = compacted(tmp_path / "t-0")
    assert not staging_dir(reopened.directory).exists()
    await assert_next_clean_succeeds(reopened, before)


@pytest.mark.parametrize(
    ("program", "error"),
    [
        ("import os; os.abort()", "killed by SIGABRT"),
        ("import sys; sys.exit('no memory')", "exited with status 1: no memory"),
        ("import sys; sys.stdout.write('garbage')", "not CBOR"),
    ],
    ids=["abort", "exit", "garbage"],
)
async def test_a_crashed_or_garbage_child_is_a_typed_error(
    tmp_path: Path, program: str, error: str
) -> None:
    """(Answers of the wrong shape or for another job: test_clean_job_codec.py.)"""
    log = filled(tmp_path / "t-0")
    files = segment_files(log)
    with pytest.raises(CleanerProcessError, match=error):
        await clean_in_process(job_of(log), -1, 0, argv=[sys.executable, "-c", program])
    assert segment_files(log) == files


async def test_a_damaged_source_fails_the_clean_in_the_child_as_in_the_thread(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "t-0"
    log = filled(directory)
    first = log.segments()[0].log_path
    with open(first, "r+b") as f:  # a flipped bit in the first batch's records
        f.seek(70)
        byte = f.read(1)
        f.seek(70)
        f.write(bytes([byte[0] ^ 1]))
    files = segment_files(log)
    with pytest.raises(CleanerProcessError, match="CorruptLog: segment 0"):
        await clean_now_in_process(log, T0 + 10_000)
    assert segment_files(log) == files
    with pytest.raises(CorruptLog, match="segment 0"):
        clean_now(log, T0 + 10_000)


def test_under_a_file_layer_cleans_stay_on_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """A child's writes would go around the layer (the chaos harness's faulty disk), so the
    layer's faults would never reach the cleaned segments."""
    from rillet.broker.config import TasksConfig
    from rillet.broker.replica.log_cleaner import worker_for
    from rillet.wire import disk_io

    assert not disk_io.layered()
    assert worker_for(TasksConfig()) == "process"
    assert worker_for(dataclasses.replace(TasksConfig(), log_cleaner_worker="thread")) == "thread"

    def layered_pwrite(fd: int, data: bytes, offset: int) -> int:
        return os.pwrite(fd, data, offset)

    monkeypatch.setattr(disk_io, "pwrite", layered_pwrite)
    assert disk_io.layered()
    assert worker_for(TasksConfig()) == "thread"
