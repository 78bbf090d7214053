"""The background scrub: re-check the CRC of every stored batch, paced, off the event loop.

Bit rot in a segment the store trusts (sealed, fsynced, cleanly closed) is otherwise only
found when that range is first served. Every ``[tasks] log_scrub_interval_ms`` after the
previous pass ended, a pass walks every segment of every local replica
(``partition_store.scrub_plan`` decides the steps and the pacing, at most
``log_scrub_bytes_per_second`` on average); each step reads and checks a bounded range in a
worker thread. A damaged batch is reported on its replica, which the repair task then
repairs from a healthy copy (``replica_repair``). Ranges that pass are marked verified, so
serving them stays ``sendfile`` only.

``SIGUSR1`` starts a pass now (``rillet scrub --data-dir`` sends it to a running node), and
each finished pass is summarised in ``<data_dir>/scrub-status.json``.
"""

from __future__ import annotations

import json
import logging
import os
import signal
from pathlib import Path

import trio

from rillet.broker.config import TasksConfig
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.partition_store.batch_verify import BatchDamage, VerifyOutcome, verify_file_range
from rillet.partition_store.errors import StoreError
from rillet.partition_store.scrub_plan import ScrubPlan, ScrubStats, ScrubStep, ScrubTarget

log = logging.getLogger(__name__)

SCRUB_STATUS_FILE = "scrub-status.json"


class LogScrubber:
    def __init__(self, tasks: TasksConfig, replicas: ReplicaManager, data_dir: Path) -> None:
        self._tasks = tasks
        self._replicas = replicas
        self._status_path = data_dir / SCRUB_STATUS_FILE
        self._now = trio.Event()
        self.passes = 0
        self._status_path.unlink(missing_ok=True)  # a previous run's; rewritten once ready

    def scrub_now(self) -> None:
        """Start a pass now instead of at the next interval."""
        self._now.set()

    async def run(self) -> None:
        interval_ms = self._tasks.log_scrub_interval_ms
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch_signal)
            while True:
                with trio.move_on_after(interval_ms / 1000 if interval_ms > 0 else float("inf")):
                    await self._now.wait()
                self._now = trio.Event()
                await self.scrub_pass()

    async def _watch_signal(self) -> None:
        with trio.open_signal_receiver(signal.SIGUSR1) as signals:
            await trio.to_thread.run_sync(self._write_status, ScrubStats(), [])
            async for _ in signals:
                log.info("scrub requested (SIGUSR1)")
                self.scrub_now()

    async def scrub_pass(self) -> ScrubStats:
        """One pass over every segment of every local replica; returns what it checked."""
        targets = [
            (replica, target)
            for replica in self._replicas.replicas()
            if not replica.deleted
            for target in _targets_of(replica)
        ]
        plan: ScrubPlan[PartitionReplica] = ScrubPlan(
            targets, self._tasks.log_scrub_bytes_per_second, self._replicas.clock.now_ms()
        )
        found: list[tuple[PartitionReplica, BatchDamage]] = []
        while (step := plan.next_step(self._replicas.clock.now_ms())) is not None:
            if isinstance(step, int):
                await trio.sleep(step / 1000)
                continue
            damage = await self._run_step(plan, step)
            if damage is not None:
                found.append((step.key, damage))
        self.passes += 1
        stats = plan.stats
        level = logging.ERROR if found else logging.INFO
        log.log(
            level,
            "scrub pass %d: %d segments, %d bytes checked, %d damaged",
            self.passes,
            stats.segments_checked,
            stats.bytes_checked,
            len(found),
        )
        await trio.to_thread.run_sync(self._write_status, stats, found)
        return stats

    async def _run_step(
        self, plan: ScrubPlan[PartitionReplica], step: ScrubStep[PartitionReplica]
    ) -> BatchDamage | None:
        replica = step.key
        try:
            fd = None if replica.deleted else replica.log.open_for_scrub(step.target)
        except (StoreError, OSError):
            fd = None
        if fd is None:
            plan.skip_target(step)
            return None
        try:
            outcome = await trio.to_thread.run_sync(_verify_step, fd, step)
        except OSError as exc:
            log.error("scrub of %s failed: %s", step.target.path, exc)
            plan.skip_target(step)
            return None
        if replica.deleted:
            plan.skip_target(step)
            return None
        try:
            damage = replica.log.note_scrubbed(step.target, step.start, outcome)
        except StoreError:
            damage = None
        plan.step_done(step, outcome)
        if damage is not None:
            replica.report_damage(damage)
        return damage

    def _write_status(
        self, stats: ScrubStats, found: list[tuple[PartitionReplica, BatchDamage]]
    ) -> None:
        status = {
            "passes": self.passes,
            "finished_ms": self._replicas.clock.now_ms(),
            "segments_checked": stats.segments_checked,
            "bytes_checked": stats.bytes_checked,
            "damaged": [
                {
                    "partition": str(replica.key),
                    "file": str(damage.segment_path),
                    "position": damage.position,
                    "offset": damage.offset,
                    "reason": damage.reason,
                }
                for replica, damage in found
            ],
        }
        tmp = self._status_path.with_name(self._status_path.name + ".tmp")
        try:
            tmp.write_text(json.dumps(status))
            os.replace(tmp, self._status_path)
        except OSError as exc:
            log.warning("cannot write %s: %s", self._status_path, exc)


def _targets_of(replica: PartitionReplica) -> list[ScrubTarget]:
    try:
        return replica.log.scrub_targets()
    except StoreError:
        return []  # closed meanwhile


def _verify_step(fd: int, step: ScrubStep[PartitionReplica]) -> VerifyOutcome:
    try:
        return verify_file_range(
            fd, step.start, step.target.size, step.expected_offset, step.max_bytes
        )
    finally:
        os.close(fd)
