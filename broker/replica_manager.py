"""All partition replicas on this node, and the background work they need.

Owns opening logs at start-up (recovery happens there), creating and deleting topics' logs,
the flush task (fsync in a worker thread, never on the event loop) and the retention task.
"""

from __future__ import annotations

import logging
import shutil
import time
import uuid
from pathlib import Path

import trio

from rillet.broker.config import NodeConfig
from rillet.broker.errors import TopicError
from rillet.broker.partition_replica import PartitionReplica, TopicPartitionKey
from rillet.broker.topic_config import effective_log_config, validate_topic_configs
from rillet.broker.topic_registry import TopicInfo, TopicRegistry, validate_topic_name
from rillet.partition_store.log import PartitionLog
from rillet.wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

META_DIR = "__meta"
DELETE_SUFFIX = "-delete"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class ReplicaManager:
    """Maps (topic, partition) to the local replica; creates and deletes topics' logs."""

    def __init__(self, config: NodeConfig) -> None:
        self.config = config
        self.data_dir = config.data_dir
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.registry = TopicRegistry(self.data_dir / META_DIR)
        self._replicas: dict[TopicPartitionKey, PartitionReplica] = {}
        self._flush_wakeup = trio.Event()

    # -- lookup ---------------------------------------------------------------------------

    def get(self, topic: str, partition: int) -> PartitionReplica | None:
        return self._replicas.get(TopicPartitionKey(topic, partition))

    def replicas(self) -> list[PartitionReplica]:
        return list(self._replicas.values())

    # -- lifecycle ------------------------------------------------------------------------

    def open_all(self) -> None:
        """Open (and recover) every partition of every known topic; purge deleted dirs."""
        for stale in self.data_dir.glob(f"*{DELETE_SUFFIX}"):
            shutil.rmtree(stale, ignore_errors=True)
        started = time.monotonic()
        for topic in self.registry.all():
            self._open_topic(topic)
        log.info("opened %d partitions in %.2fs", len(self._replicas), time.monotonic() - started)

    def close_all(self) -> None:
        for replica in self._replicas.values():
            replica.wake_all()
            try:
                replica.log.close()
            except OSError:
                log.exception("closing %s failed", replica.key)
        self._replicas.clear()

    def _partition_dir(self, topic: str, partition: int) -> Path:
        return self.data_dir / f"{topic}-{partition}"

    def _open_topic(self, topic: TopicInfo) -> None:
        log_config = effective_log_config(self.config.log, topic.configs)
        for p in range(topic.num_partitions):
            key = TopicPartitionKey(topic.name, p)
            plog = PartitionLog.open(
                self._partition_dir(topic.name, p), log_config, now_ms(), topic.name, p
            )
            self._replicas[key] = PartitionReplica(key, plog, self.request_flush)

    # -- topic admin ----------------------------------------------------------------------

    def validate_new_topic(
        self, name: str, num_partitions: int, replication_factor: int, configs: dict[str, str]
    ) -> dict[str, str]:
        validate_topic_name(name)
        if name in self.registry:
            raise TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} already exists")
        limit = self.config.topics.max_partitions_per_topic
        if num_partitions == -1:
            num_partitions = self.config.topics.num_partitions
        if not 1 <= num_partitions <= limit:
            raise TopicError(
                ErrorCode.INVALID_PARTITIONS, f"num_partitions must be between 1 and {limit}"
            )
        if replication_factor == -1:
            replication_factor = self.config.topics.replication_factor
        if replication_factor != 1:
            raise TopicError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                f"replication factor {replication_factor} exceeds the 1 available broker",
            )
        return validate_topic_configs(configs, self.config.log)

    def create_topic(self, name: str, num_partitions: int, configs: dict[str, str]) -> TopicInfo:
        if num_partitions == -1:
            num_partitions = self.config.topics.num_partitions
        info = self.registry.add(name, num_partitions, configs)
        self._open_topic(info)
        return info

    def delete_topic(self, name: str) -> None:
        info = self.registry.remove(name)
        for p in range(info.num_partitions):
            replica = self._replicas.pop(TopicPartitionKey(name, p), None)
            if replica is None:
                continue
            replica.mark_deleted()
            try:
                replica.log.close()
            except OSError:
                log.exception("closing %s for deletion failed", replica.key)
            src = self._partition_dir(name, p)
            if src.exists():
                # Rename first (atomic), remove later: a restart mid-delete finds the
                # -delete directory and finishes the job.
                src.rename(src.with_name(f"{src.name}.{uuid.uuid4().hex[:8]}{DELETE_SUFFIX}"))

    async def purge_deleted_dirs(self) -> None:
        stale = list(self.data_dir.glob(f"*{DELETE_SUFFIX}"))
        for d in stale:
            await trio.to_thread.run_sync(shutil.rmtree, d, True)

    # -- background tasks -----------------------------------------------------------------

    def request_flush(self) -> None:
        self._flush_wakeup.set()

    async def run_flush_task(self) -> None:
        """fsync partitions whose flush policy asks for it, off the event loop."""
        interval_s = self.config.tasks.flush_check_interval_ms / 1000
        while True:
            with trio.move_on_after(interval_s):
                await self._flush_wakeup.wait()
            self._flush_wakeup = trio.Event()
            now = now_ms()
            for replica in list(self._replicas.values()):
                if replica.deleted or not (replica.flush_requested or replica.log.needs_flush(now)):
                    continue
                replica.flush_requested = False
                plan = replica.log.flush_plan()
                if plan is None:
                    continue
                try:
                    await trio.to_thread.run_sync(plan.run)
                except OSError as exc:
                    # After a failed fsync the kernel may have dropped the dirty pages: what
                    # is on disk is unknown. Stop the node rather than go on acknowledging
                    # (fail-stop; recovery on restart re-validates the log).
                    log.critical("fsync of %s failed, stopping the node: %s", replica.key, exc)
                    raise
                if not replica.deleted:
                    replica.log.flush_completed(plan)
                    replica.on_flushed()

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
            now = now_ms()
            for replica in list(self._replicas.values()):
                try:
                    replica.log.purge_deleted_segments(now)
                except OSError:
                    log.exception("removing deleted segments of %s failed", replica.key)

    def enforce_retention(self) -> int:
        """Delete expired segments in every partition; returns how many were deleted."""
        deleted = 0
        now = now_ms()
        for replica in list(self._replicas.values()):
            try:
                deleted += replica.log.delete_expired_segments(now)
            except OSError:
                log.exception("retention on %s failed", replica.key)
        if deleted:
            log.info("retention deleted %d segments", deleted)
        return deleted
