"""All partition replicas on this node, and the background work they need.

Owns opening logs (recovery happens there) and removing them as the metadata assigns and
unassigns partitions, the flush task (fsync in a worker thread, never on the event loop) and
the retention task.
"""

from __future__ import annotations

import logging
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import trio

from rillet.broker.config import NodeConfig
from rillet.broker.replica.clean_close import close_logs
from rillet.broker.replica.flush_pass import FlushPass, checkpoints_due
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.reconcile_pass import install_in_role
from rillet.broker.replica.replica_role import ReplicaRole, TopicPartitionKey
from rillet.broker.replica.topic_config import effective_log_config, min_insync_replicas
from rillet.broker.runtime.clock import SYSTEM_CLOCK, Clock
from rillet.broker.runtime.loop_slices import TimeSlicer
from rillet.partition_store.errors import TopicIdMismatch
from rillet.partition_store.log import PartitionLog
from rillet.partition_store.partition_files import PartitionFiles
from rillet.wire.atomic_file import SyncBatch

log = logging.getLogger(__name__)

DELETE_SUFFIX = "-delete"
# High-watermark checkpoints written per worker-thread call.
CHECKPOINT_BATCH = 2_000
# A shutdown closing at least this many partitions logs how long that took.
CLOSE_LOG_MIN_PARTITIONS = 100


class ReplicaManager:
    """Maps (topic, partition) to the local replica; opens and removes partitions' logs.

    Which partitions this node hosts is decided by the metadata quorum; the
    :class:`~rillet.broker.replica.partition_reconciler.PartitionReconciler` opens logs
    (:meth:`open_log`), installs, detaches and discards replicas as the committed metadata
    changes.
    """

    def __init__(self, config: NodeConfig, clock: Clock = SYSTEM_CLOCK) -> None:
        self.config = config
        self.clock = clock
        self.data_dir = config.data_dir
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._replicas: dict[TopicPartitionKey, PartitionReplica] = {}
        # The same replicas by plain (topic, partition) tuple: the request path looks up
        # thousands per fetch, and a tuple hashes in C where the key class hashes in Python.
        self._by_tuple: dict[tuple[str, int], PartitionReplica] = {}
        self._flush_wakeup = trio.Event()
        # Called with each fsync's duration in seconds (the node's metrics, when enabled).
        self.on_fsync_s: Callable[[float], None] | None = None
        self._damage_listener: Callable[[], None] | None = None
        # Topic -> partitions whose leader here is cut off (replication/stranded_leaders.py),
        # as of the watch's last pass: Metadata answers name no leader for them.
        self.stranded: dict[str, frozenset[int]] = {}

    def set_damage_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` when a replica reports a damaged batch (the repair task)."""
        self._damage_listener = listener
        for replica in self._replicas.values():
            replica.on_damage = listener

    # -- lookup ---------------------------------------------------------------------------

    def get(self, topic: str, partition: int) -> PartitionReplica | None:
        return self._by_tuple.get((topic, partition))

    def replicas(self) -> list[PartitionReplica]:
        return list(self._replicas.values())

    def hosted(self) -> set[TopicPartitionKey]:
        return set(self._replicas)

    # -- lifecycle ------------------------------------------------------------------------

    async def close_all(self) -> None:
        """Close every log cleanly (flushed, checkpoints and the clean-shutdown marker
        written, so the next start trusts them), all together: broker.clean_close."""
        replicas = list(self._replicas.values())
        for replica in replicas:
            replica.wake_all()
        started_s = time.monotonic()
        await close_logs(replicas)
        self._replicas.clear()
        self._by_tuple.clear()
        if len(replicas) >= CLOSE_LOG_MIN_PARTITIONS:
            log.info("closed %d partitions in %.1f s", len(replicas), time.monotonic() - started_s)

    def _partition_dir(self, topic: str, partition: int) -> Path:
        return self.data_dir / f"{topic}-{partition}"

    def open_log(
        self,
        topic: str,
        topic_id: str,
        partition: int,
        configs: dict[str, str],
        leader_epoch: int | None = None,
        sync_batch: SyncBatch | None = None,
    ) -> PartitionLog:
        """Open (or create) a partition's log, starting ``leader_epoch`` in it when given.

        File work only, touching no state of the manager: the reconciler runs it in a worker
        thread for partitions not hosted yet, so creating thousands of partitions never
        holds the event loop (each new log writes a few small files: fsynced, or durable
        when ``sync_batch`` commits).
        """
        directory = self._partition_dir(topic, partition)
        log_config = effective_log_config(self.config.log, configs)
        try:
            plog = PartitionLog.open(
                directory, log_config, self.clock.now_ms(), topic, partition, topic_id, sync_batch
            )
        except TopicIdMismatch:
            log.info("%s belongs to a deleted topic of that name: removing it", directory)
            self._move_aside(directory)
            plog = PartitionLog.open(
                directory, log_config, self.clock.now_ms(), topic, partition, topic_id, sync_batch
            )
        if leader_epoch is not None:
            plog.start_leader_epoch(leader_epoch)  # what set_role would do, off the loop
        return plog

    def install(
        self,
        key: TopicPartitionKey,
        plog: PartitionLog,
        topic_id: str,
        configs: dict[str, str],
        role: ReplicaRole,
    ) -> PartitionReplica:
        """Host ``plog`` (from :meth:`open_log`, or the hosted replica's own) in ``role``."""
        replica = self._replicas.get(key)
        if replica is None or replica.log is not plog:
            replica = PartitionReplica(key, plog, self.request_flush, topic_id=topic_id)
            if self._damage_listener is not None:
                replica.on_damage = self._damage_listener
            self._replicas[key] = replica
            self._by_tuple[(key.topic, key.partition)] = replica
        install_in_role(
            replica,
            min_insync_replicas(configs, self.config.replication.default_min_insync_replicas),
            effective_log_config(self.config.log, configs),
            role,
            self.clock.steady_ms(),
        )
        return replica

    def remove_replica(self, topic: str, partition: int) -> None:
        """Stop hosting the partition and delete its data (the directory is renamed first)."""
        replica = self._replicas.pop(TopicPartitionKey(topic, partition), None)
        self._by_tuple.pop((topic, partition), None)
        if replica is not None:
            replica.mark_deleted()
            try:
                replica.log.close()
            except OSError:
                log.exception("closing %s for deletion failed", replica.key)
        directory = self._partition_dir(topic, partition)
        if directory.exists():
            self._move_aside(directory)

    def detach_replica(self, topic: str, partition: int) -> tuple[PartitionReplica | None, Path]:
        """Stop hosting the partition now and rename its directory aside (cheap, on the
        loop); :meth:`discard` then releases its files and deletes them (in a worker
        thread). The rename comes first, so a restart in between finishes the job."""
        replica = self._replicas.pop(TopicPartitionKey(topic, partition), None)
        self._by_tuple.pop((topic, partition), None)
        if replica is not None:
            replica.mark_deleted()  # every reader checks this before touching the log
        directory = self._partition_dir(topic, partition)
        if not directory.exists():
            return replica, directory
        return replica, self._move_aside(directory)

    @staticmethod
    def discard(replica: PartitionReplica | None, moved: Path) -> None:
        """Release a detached replica's files and delete its renamed directory."""
        if replica is not None:
            # Only close: a recreated topic's partition may already live at the old path.
            replica.log.release()
        if moved.name.endswith(DELETE_SUFFIX):
            shutil.rmtree(moved, ignore_errors=True)

    def _move_aside(self, directory: Path) -> Path:
        # Rename first (atomic), remove later: a restart mid-delete finds the -delete
        # directory and finishes the job.
        moved = directory.with_name(f"{directory.name}.{uuid.uuid4().hex[:8]}{DELETE_SUFFIX}")
        directory.rename(moved)
        return moved

    def remove_unassigned_dirs(self) -> int:
        """Delete partition directories on disk that this node no longer hosts.

        Called only once the node's metadata has caught up with the quorum, so a partition
        missing from it was really deleted or moved while the node was down.
        """
        removed = 0
        for directory in sorted(self.data_dir.iterdir()):
            if not directory.is_dir() or directory.name.endswith(DELETE_SUFFIX):
                continue
            meta = PartitionFiles(directory).read_meta()
            if meta is None:
                continue  # not a partition directory (raft files, operator's files)
            key = TopicPartitionKey(meta.topic, meta.partition)
            if key in self._replicas:
                continue
            if not meta.topic_id:
                # Written before the metadata quorum existed: never delete data whose topic
                # we cannot identify. The operator decides (docs/operations.md).
                log.warning("%s holds data of no known topic: left in place", directory.name)
                continue
            log.info("removing %s: no longer assigned to this node", directory.name)
            self._move_aside(directory)
            removed += 1
        return removed

    async def purge_deleted_dirs(self) -> None:
        stale = list(self.data_dir.glob(f"*{DELETE_SUFFIX}"))
        for d in stale:
            await trio.to_thread.run_sync(shutil.rmtree, d, True)

    def follower_connection_lost(self, replica_id: int) -> None:
        """A follower's replica-fetch connection closed: see LeaderState.follower_disconnected."""
        cfg = self.config.replication
        now = self.clock.steady_ms()
        for replica in self._replicas.values():
            if replica.leader is not None:
                replica.leader.follower_disconnected(
                    replica_id, now, cfg.replica_lag_time_max_ms, cfg.follower_disconnect_grace_ms
                )

    # -- background tasks -----------------------------------------------------------------

    def request_flush(self) -> None:
        self._flush_wakeup.set()

    async def run_flush_task(self) -> None:
        """fsync partitions whose flush policy asks for it, off the event loop: passes of
        :class:`~rillet.broker.replica.flush_pass.FlushPass`, when a replica asks or after
        the check interval."""
        interval_s = self.config.tasks.flush_check_interval_ms / 1000
        while True:
            with trio.move_on_after(interval_s):
                await self._flush_wakeup.wait()
            self._flush_wakeup = trio.Event()
            flush_pass = FlushPass(self._replicas.values(), self.clock.now_ms())
            # Checking 10,000 replicas for a due flush held the loop for up to 67 ms in one
            # step (measured); yield every slice of loop time instead.
            slicer = TimeSlicer()
            for replica in flush_pass:
                await slicer.step()
                plan = flush_pass.due(replica)
                if plan is None:
                    continue
                started_s = self.clock.monotonic_s()
                try:
                    await trio.to_thread.run_sync(plan.run)
                except OSError as exc:
                    # After a failed fsync the kernel may have dropped the dirty pages: what
                    # is on disk is unknown. Stop the node rather than go on acknowledging
                    # (fail-stop; recovery on restart re-validates the log).
                    log.critical("fsync of %s failed, stopping the node: %s", replica.key, exc)
                    raise
                if self.on_fsync_s is not None:
                    self.on_fsync_s(self.clock.monotonic_s() - started_s)
                flush_pass.fsynced(replica, plan)

    async def run_high_watermark_checkpoint_task(self) -> None:
        """Persist moved high watermarks every few seconds (and on close), off the loop.

        A restarted replica serves nothing above its checkpoint until its leader (or its
        own election and its followers' fetches) says more is committed.
        """
        interval_s = self.config.replication.high_watermark_checkpoint_interval_ms / 1000
        while True:
            await trio.sleep(interval_s)
            await self.checkpoint_high_watermarks()

    async def checkpoint_high_watermarks(self) -> None:
        """Write every moved high watermark, up to ``CHECKPOINT_BATCH`` per worker-thread
        call, without fsyncs (thousands of partitions move theirs between checkpoints; a
        checkpoint lost in a power failure is older or absent, which is safe)."""
        moved = checkpoints_due(self._replicas.values())
        for start in range(0, len(moved), CHECKPOINT_BATCH):
            await trio.to_thread.run_sync(
                _checkpoint_batch, moved[start : start + CHECKPOINT_BATCH]
            )

    async def run_retention_task(self) -> None:
        interval_s = self.config.tasks.retention_check_interval_ms / 1000
        while True:
            await trio.sleep(interval_s)
            self.enforce_retention()
            await self.purge_deleted_dirs()

    async def run_deleted_files_task(self) -> None:
        """Unlink segments retention deleted once their file_delete_delay_ms has passed."""
        interval_s = self.config.tasks.deleted_files_check_interval_ms / 1000
        while True:
            await trio.sleep(interval_s)
            now = self.clock.now_ms()
            for replica in list(self._replicas.values()):
                try:
                    replica.log.purge_deleted_segments(now)
                except OSError:
                    log.exception("removing deleted segments of %s failed", replica.key)

    def enforce_retention(self) -> int:
        """Delete expired segments in every partition; returns how many were deleted."""
        deleted = 0
        now = self.clock.now_ms()
        for replica in list(self._replicas.values()):
            try:
                deleted += replica.enforce_retention(now)
            except OSError:
                log.exception("retention on %s failed", replica.key)
        if deleted:
            log.info("retention deleted %d segments", deleted)
        return deleted


def _checkpoint_batch(replicas: list[PartitionReplica]) -> None:
    """Worker thread: write each replica's high-watermark checkpoint."""
    for replica in replicas:
        try:
            replica.checkpoint_high_watermark(durable=False)
        except OSError as exc:
            if not replica.deleted:
                log.warning("high-watermark checkpoint of %s failed: %s", replica.key, exc)
