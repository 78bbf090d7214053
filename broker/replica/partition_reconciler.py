"""Makes the partitions this node hosts match the committed metadata.

For every partition whose replica list names this node, the local log is opened (created if
new) and given the committed role: leader or follower, leader epoch, ISR. Partitions no
longer assigned here (topic deleted, replicas moved) are closed and their data removed. It
starts only once the broker has caught up with the metadata as of its registration, so a
node restarting with stale metadata never deletes a partition that still exists.

A pass touches only what changed since the previous one (partition states are immutable, so
an unchanged partition is the same object), and it never holds the event loop for long: new
logs are opened (a few fsyncs each) in worker threads, a batch at a time, deleted ones are
renamed aside at once and removed in a worker thread, and role changes yield to the loop
every few milliseconds. Creating or deleting a topic of thousands of partitions therefore
leaves heartbeats, Raft and requests on time.

What a pass does (which replicas to install, replace or remove, in which role, and when a
pass is due) is decided by :class:`~rillet.broker.replica.reconcile_pass.Reconciliation`,
which the replication simulation runs too; this driver does the file and thread work.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from pathlib import Path

import trio

from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.reconcile_pass import Open, Reconciliation, Wanted
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.broker.replica.replica_role import TopicPartitionKey
from rillet.broker.runtime.loop_slices import TimeSlicer
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.state import MetadataState
from rillet.partition_store.log import PartitionLog
from rillet.wire.atomic_file import SyncBatch

log = logging.getLogger(__name__)

# New logs opened per worker-thread call (their files made durable by one file-system sync),
# and calls running at once.
OPEN_BATCH = 128
OPEN_THREADS = 2
# Up to this many new logs are opened on the event loop itself (a millisecond or two each).
OPEN_INLINE_MAX = 8
# Longest stretch of role changes or removals before yielding to the event loop.
SLICE_S = 0.01


class PartitionReconciler:
    """Runs the passes :class:`Reconciliation` decides: opens logs in worker threads,
    installs replicas through the replica manager, removes what is no longer assigned."""

    def __init__(self, node_id: int, replicas: ReplicaManager, follower: MetadataFollower) -> None:
        self._node_id = node_id
        self._replicas = replicas
        self._follower = follower
        self._core = Reconciliation(node_id)
        self._changed = trio.Event()
        self._listeners: list[Callable[[], None]] = []
        self._open_limiter = trio.CapacityLimiter(OPEN_THREADS)

    def on_reconciled(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after every pass (the replica fetchers follow leader moves)."""
        self._listeners.append(listener)

    async def run(self, caught_up: trio.Event) -> None:
        await caught_up.wait()
        self._core.caught_up()
        await self.reconcile(self._follower.state)
        removed = await trio.to_thread.run_sync(self._replicas.remove_unassigned_dirs)
        if removed:
            log.info("removed %d partition directories no longer assigned here", removed)
        while True:
            await self._follower.wait_applied(self._core.reconciled_index + 1)
            await self.reconcile(self._follower.state)

    async def wait_reconciled(self, index: int) -> None:
        while self._core.reconciled_index < index:
            await self._changed.wait()

    def _topic_id_of(self, key: TopicPartitionKey) -> str | None:
        replica = self._replicas.get(key.topic, key.partition)
        return None if replica is None else replica.topic_id

    async def reconcile(self, state: MetadataState) -> None:
        """One pass, as :meth:`Reconciliation.begin` plans it."""
        planned = self._core.begin(state, self._replicas.hosted(), self._topic_id_of)
        slicer = TimeSlicer(SLICE_S)
        await self._remove(planned.gone, slicer)
        to_open: list[tuple[TopicPartitionKey, Wanted]] = []
        for step in planned.steps:
            if isinstance(step, Open):
                if step.replace:  # an earlier topic of the same name
                    await self._remove([step.key], slicer)
                to_open.append((step.key, step.wanted))
                continue
            replica = self._replicas.get(step.key.topic, step.key.partition)
            assert replica is not None  # planned from the hosted replicas just now
            self._install(step.key, replica.log, step.wanted)
            await slicer.step()
        await self._open(to_open)
        if self._core.finish(planned, state):
            self._notify()
        self._changed.set()
        self._changed = trio.Event()

    def _notify(self) -> None:
        for listener in self._listeners:
            listener()

    def _install(self, key: TopicPartitionKey, plog: PartitionLog, w: Wanted) -> None:
        self._replicas.install(
            key, plog, w.topic.topic_id, w.topic.configs, self._core.role(w.partition)
        )
        self._core.installed(key, w)

    async def _remove(self, keys: list[TopicPartitionKey], slicer: TimeSlicer) -> None:
        detached = []
        for key in keys:
            log.info("no longer hosting %s: removing it", key)
            self._core.removing(key)
            try:
                detached.append(self._replicas.detach_replica(key.topic, key.partition))
            except OSError:
                log.exception("cannot remove %s", key)
            await slicer.step()
        if detached:
            await trio.to_thread.run_sync(self._discard_all, detached)

    def _discard_all(self, detached: list[tuple[PartitionReplica | None, Path]]) -> None:
        for replica, moved in detached:
            try:
                self._replicas.discard(replica, moved)
            except OSError:
                log.exception("deleting %s failed", moved)

    async def _open(self, to_open: list[tuple[TopicPartitionKey, Wanted]]) -> None:
        """Open new logs in worker threads, ``OPEN_BATCH`` at a time, and host each batch as
        soon as it is open (its leaders can take writes while later batches still open)."""
        if not to_open:
            return
        if len(to_open) <= OPEN_INLINE_MAX:
            # A few partitions (a small topic, a restart's stragglers) open at once, in this
            # step, as before: a client that was told the topic exists finds it led at
            # once, and the loop is held for a few milliseconds at most.
            opened = self._open_logs(to_open, together=False)
            for (key, w), plog in zip(to_open, opened, strict=True):
                if plog is None:
                    self._core.open_failed(key, w)
                else:
                    self._install(key, plog, w)
            return
        many = len(to_open) > OPEN_BATCH
        started_s = trio.current_time()
        if many:
            log.info("opening %d new partitions", len(to_open))
        async with trio.open_nursery() as nursery:
            for start in range(0, len(to_open), OPEN_BATCH):
                nursery.start_soon(self._open_batch, to_open[start : start + OPEN_BATCH])
        if many:
            log.info(
                "opened %d new partitions in %.1f s", len(to_open), trio.current_time() - started_s
            )

    async def _open_batch(self, batch: list[tuple[TopicPartitionKey, Wanted]]) -> None:
        opened = await trio.to_thread.run_sync(self._open_logs, batch, limiter=self._open_limiter)
        slicer = TimeSlicer(SLICE_S)
        for (key, w), plog in zip(batch, opened, strict=True):
            if plog is None:
                self._core.open_failed(key, w)
                continue
            self._install(key, plog, w)
            await slicer.step()
        # Followers start fetching the partitions opened so far, not after the whole pass:
        # their leaders count the time since they became leader against the ISR.
        self._notify()

    def _open_logs(
        self, batch: list[tuple[TopicPartitionKey, Wanted]], together: bool = True
    ) -> list[PartitionLog | None]:
        """Open each log (a new leader's epoch started in it already). ``together`` (a
        worker thread's batch): the files they created are made durable by one sync of the
        file system for the whole batch; else (a few, on the event loop) each by its own
        fsyncs, which never wait for other files' dirty data."""
        durable = SyncBatch() if together else None
        out: list[PartitionLog | None] = []
        for key, w in batch:
            p = w.partition
            epoch = p.leader_epoch if p.leader == self._node_id else None
            try:
                out.append(
                    self._replicas.open_log(
                        key.topic, w.topic.topic_id, key.partition, w.topic.configs, epoch, durable
                    )
                )
            except OSError:
                log.exception("cannot open %s", key)
                out.append(None)
        try:
            if durable is not None:
                durable.commit()
        except OSError:
            log.exception("syncing %d new partition logs failed: opening them again", len(out))
            for plog in out:
                if plog is not None:
                    with contextlib.suppress(OSError):
                        plog.close()
            return [None] * len(out)
        return out
