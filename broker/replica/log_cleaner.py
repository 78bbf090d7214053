"""The log cleaner task: compacts the logs of ``cleanup.policy=compact`` topics, one clean
at a time, the file work off the event loop.

Each round plans every compacted replica on this node (``partition_store.cleaning_pass``:
below the replica's high watermark, sealed segments only) and cleans the dirtiest log, as
Kafka's cleaner picks the log with the highest dirty ratio. The planning and the swap run on
the event loop (a few renames); reading, deduplicating and writing the cleaned segments run
paced to ``log_cleaner_io_max_bytes_per_second``, by default in a child process at a lower
CPU priority (``clean_process``: off the node's GIL), or with ``log_cleaner_worker =
"thread"`` in a worker thread (``trio.to_thread``). Under a file layer (the chaos harness's
fault-injecting disk, ``wire.disk_io.layered``) cleans always run on a thread: a child's
writes would go around the layer, and its faults would never reach them. A clean that
fails there (a damaged source, a full disk, a child killed or answering garbage) is logged
and changes nothing.
Appends, fetches and replication go on meanwhile: the cleaner never touches the active
segment, and a clean whose sources changed (a truncation, retention) is discarded. When no
log needs cleaning it waits ``log_cleaner_backoff_ms``.

Leaders and followers clean alike, each its own log: the result is a function of the log's
batches, the topic's settings and the time of the clean, so replicas hold the same records.

Metrics (on the replica, read by ``/metrics``): bytes read by cleans, the time of the last
clean; the dirty ratio is computed at scrape time.
"""

from __future__ import annotations

import logging
import shutil

import trio

from rillet.broker.config import TasksConfig
from rillet.broker.replica.clean_process import clean_in_process
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.partition_store.cleaning_pass import plan_for, work
from rillet.partition_store.compaction_plan import CleanPlan
from rillet.partition_store.errors import StoreError
from rillet.partition_store.segment_cleaner import CleanJob, CleanResult, IoBudget, staging_dir
from rillet.wire import disk_io

log = logging.getLogger(__name__)


class LogCleaner:
    def __init__(self, tasks: TasksConfig, replicas: ReplicaManager) -> None:
        self._tasks = tasks
        self._replicas = replicas
        self.cleans = 0

    async def run(self) -> None:
        while True:
            try:
                cleaned = await self.clean_once()
            except Exception:  # a bug in one clean must not stop the node: log, back off
                log.exception("the log cleaner failed; trying again later")
                cleaned = False
            if not cleaned:
                await trio.sleep(self._tasks.log_cleaner_backoff_ms / 1000)

    async def clean_once(self) -> bool:
        """Clean the dirtiest log that needs it; False when none does."""
        chosen = self._dirtiest()
        if chosen is None:
            return False
        replica, plan = chosen
        try:
            job = replica.log.clean_job(plan, self._tasks.log_cleaner_dedupe_buffer_size)
        except (StoreError, OSError) as exc:
            log.warning("cannot start cleaning %s: %s", replica.key, exc)
            return False
        if job is None:
            return False
        try:
            result = await self._work(job)
        except (StoreError, OSError) as exc:
            log.error("cleaning %s failed, nothing changed: %s", replica.key, exc)
            shutil.rmtree(staging_dir(job.directory), ignore_errors=True)
            return False
        if replica.deleted:
            return True
        try:
            installed = replica.log.install_cleaned(job, result.staged, result.dirty_end)
        except (StoreError, OSError) as exc:
            log.error("installing the cleaned segments of %s failed: %s", replica.key, exc)
            return False
        self.cleans += 1
        replica.cleaner_bytes_read += result.bytes_read
        replica.cleaner_last_clean_ms = plan.now_ms
        log.info(
            "cleaned %s: %d segments, %d -> %d bytes, %d records dropped, %d keys",
            replica.key,
            installed,
            result.bytes_read,
            result.bytes_written,
            result.stats.records_dropped,
            result.keys,
        )
        return installed > 0  # else the log changed meanwhile: wait before planning again

    async def _work(self, job: CleanJob) -> CleanResult:
        rate = self._tasks.log_cleaner_io_max_bytes_per_second
        if worker_for(self._tasks) == "thread":
            return await trio.to_thread.run_sync(work, job, IoBudget(rate), abandon_on_cancel=True)
        return await clean_in_process(job, rate, self._tasks.log_cleaner_process_niceness)

    def _dirtiest(self) -> tuple[PartitionReplica, CleanPlan] | None:
        now = self._replicas.clock.now_ms()
        best: tuple[PartitionReplica, CleanPlan] | None = None
        for replica in self._replicas.replicas():
            if replica.deleted or not replica.config.compacted:
                continue
            try:
                hw = replica.high_watermark
                plan = plan_for(replica.log, now, hw, replica.log.last_stable_offset(hw))
            except (StoreError, OSError):
                continue  # closed or moving meanwhile
            if plan is not None and (best is None or plan.dirty_ratio > best[1].dirty_ratio):
                best = (replica, plan)
        return best


def worker_for(tasks: TasksConfig) -> str:
    """Where a clean's file work runs: ``log_cleaner_worker``, except always ``"thread"``
    while a file layer is installed (see the module's docstring)."""
    return "thread" if disk_io.layered() else tasks.log_cleaner_worker
