"""Every node's view of the metadata: follow the committed log and apply it.

The follower reads committed entries from the quorum in order and applies them to a
:class:`MetadataState`; every ``snapshot_every`` applied entries (not records) it hands a
snapshot to the quorum so the log can be compacted. A follower that fell behind compaction
restores the latest snapshot and continues from there. Waiters can ask to be woken once a
given index is applied, which is how a controller waits until its own records are visible
before deciding again. What is applied and when a snapshot is due is
:class:`~rillet.metadata_quorum.follower_progress.FollowerProgress`'s part (the replication
simulation runs it too).
"""

from __future__ import annotations

import logging
from typing import Protocol

import trio

from rillet.metadata_quorum.follower_progress import FollowerProgress
from rillet.metadata_quorum.state import MetadataState
from rillet.raft.errors import SnapshotRequired
from rillet.raft.quorum import Entry, Snapshot

log = logging.getLogger(__name__)

# Longest stretch of applying entries before yielding to the event loop.
APPLY_SLICE_S = 0.01


class CommittedLog(Protocol):
    """What a follower reads: a voter's Quorum, or a broker's remote view of a voter's log."""

    async def read_committed(self, after_index: int, max_entries: int = 1000) -> list[Entry]: ...

    def save_snapshot(self, snapshot: Snapshot) -> None: ...

    def latest_snapshot(self) -> Snapshot | None: ...


class MetadataFollower:
    """Reads the committed log and applies it as :class:`FollowerProgress` says; this
    driver adds the waiting: for the log, of the waiters, and yields while applying."""

    def __init__(self, source: CommittedLog, snapshot_every: int = 10_000) -> None:
        self.source = source
        self.progress = FollowerProgress(snapshot_every)
        self._applied = trio.Event()

    @property
    def state(self) -> MetadataState:
        return self.progress.state

    async def wait_applied(self, index: int) -> None:
        """Return once every entry up to ``index`` is applied to ``state``."""
        while self.state.last_applied_index < index:
            await self._applied.wait()

    async def wait_feature_level(self, level: int) -> None:
        """Return once the cluster's feature level is at least ``level`` (features.py): what
        writes a newer form waits here (the level never goes down)."""
        while self.state.feature_level < level:
            await self.wait_applied(self.state.last_applied_index + 1)

    async def run(self) -> None:
        """Apply committed entries forever (cancel to stop)."""
        progress = self.progress
        while True:
            try:
                entries = await self.source.read_committed(progress.read_after())
            except SnapshotRequired:
                snapshot = self.source.latest_snapshot()
                if snapshot is not None:
                    log.info("restoring metadata from the snapshot at index %d", snapshot.index)
                progress.restore(snapshot)
                self._wake_waiters()  # a snapshot may cover what someone waits for
                continue
            since = trio.current_time()
            for entry in entries:
                progress.apply(entry)
                if trio.current_time() - since >= APPLY_SLICE_S:
                    # Entries are atomic, so a reader between two of them sees a state the
                    # log really had; yielding keeps requests and heartbeats on time while
                    # a long run of entries (a node catching up) is applied.
                    self._wake_waiters()
                    await trio.lowlevel.checkpoint()
                    since = trio.current_time()
            snapshot = progress.applied(entries)
            if snapshot is not None:
                self.source.save_snapshot(snapshot)
            self._wake_waiters()

    def _wake_waiters(self) -> None:
        self._applied.set()
        self._applied = trio.Event()
