"""One clean of one log, in the three parts its owner runs: plan on the log's thread, the
file work anywhere (a child process, a worker thread), install on the log's thread.

:func:`clean_now` runs all three in a row on the caller's thread (tests, tools, the bench);
the broker's cleaner task (``broker/replica/log_cleaner.py``) runs the middle part in a child
process (``clean_worker``, by default) or with ``trio.to_thread``, so appends and reads never
wait for it.
"""

from __future__ import annotations

from rillet.partition_store.compaction_plan import (
    CleanerLag,
    CleanLimits,
    CleanPlan,
    cleaner_lag,
    plan_clean,
    should_roll_active,
)
from rillet.partition_store.log import PartitionLog
from rillet.partition_store.segment_cleaner import (
    DEFAULT_MAP_MAX_BYTES,
    UNLIMITED,
    CleanJob,
    CleanResult,
    IoBudget,
    close_sources,
    run_clean,
)


def limits_of(
    log: PartitionLog, high_watermark: int, last_stable_offset: int | None = None
) -> CleanLimits:
    return CleanLimits(
        log.log_start_offset, high_watermark, log.first_dirty_offset, last_stable_offset
    )


def lag_of(
    log: PartitionLog, now_ms: int, high_watermark: int, last_stable_offset: int | None = None
) -> CleanerLag:
    limits = limits_of(log, high_watermark, last_stable_offset)
    return cleaner_lag(log.cleaner_summaries(), log.config, limits, now_ms)


def plan_for(
    log: PartitionLog, now_ms: int, high_watermark: int, last_stable_offset: int | None = None
) -> CleanPlan | None:
    """What to clean now (None: nothing). Seals the active segment first when the
    compaction lag says so, so a quiet log still gets cleaned."""
    if not log.config.compacted:
        return None
    summaries = log.cleaner_summaries()
    if should_roll_active(summaries[-1], log.active_segment.first_append_ms, log.config, now_ms):
        log.roll(now_ms)
        summaries = log.cleaner_summaries()
    limits = limits_of(log, high_watermark, last_stable_offset)
    return plan_clean(summaries, log.config, limits, now_ms, log.first_dirty_timestamp_ms())


def work(job: CleanJob, budget: IoBudget) -> CleanResult:
    """The file work (any thread, or the cleaner's child process); closes the job's
    descriptors."""
    try:
        return run_clean(job, budget)
    finally:
        close_sources(job)


def job_for(
    log: PartitionLog,
    now_ms: int,
    high_watermark: int | None = None,
    last_stable_offset: int | None = None,
    map_max_bytes: int = DEFAULT_MAP_MAX_BYTES,
) -> CleanJob | None:
    """The job of a clean now (None: nothing to clean); ``high_watermark`` defaults to the
    log end (a single replica)."""
    hw = log.log_end_offset if high_watermark is None else high_watermark
    plan = plan_for(log, now_ms, hw, last_stable_offset)
    return None if plan is None else log.clean_job(plan, map_max_bytes)


def clean_now(
    log: PartitionLog,
    now_ms: int,
    high_watermark: int | None = None,
    last_stable_offset: int | None = None,
    io_max_bytes_per_second: float = UNLIMITED,
    map_max_bytes: int = DEFAULT_MAP_MAX_BYTES,
) -> CleanResult | None:
    """Plan, clean and install on this thread; None when there was nothing to clean."""
    job = job_for(log, now_ms, high_watermark, last_stable_offset, map_max_bytes)
    if job is None:
        return None
    result = work(job, IoBudget(io_max_bytes_per_second))
    log.install_cleaned(job, result.staged, result.dirty_end)
    return result
