"""Every node's view of the metadata: follow the committed log and apply it.

The follower reads committed entries from the quorum in order and applies them to a
:class:`MetadataState`; every ``snapshot_every`` applied entries (not records) it hands a
snapshot to the quorum so the log can be compacted. A follower that fell behind compaction
restores the latest snapshot and continues from there. Waiters can ask to be woken once a
given index is applied, which is how a controller waits until its own records are visible
before deciding again.
"""

from __future__ import annotations

import logging
from typing import Protocol

import trio

from rillet.metadata_quorum.records import decode_entry
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
    def __init__(self, source: CommittedLog, snapshot_every: int = 10_000) -> None:
        self.source = source
        self.state = MetadataState()
        self._snapshot_every = snapshot_every
        self._since_snapshot = 0
        self._applied = trio.Event()

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
        while True:
            try:
                entries = await self.source.read_committed(self.state.last_applied_index)
            except SnapshotRequired:
                self._restore()
                self._wake_waiters()  # a snapshot may cover what someone waits for
                continue
            since = trio.current_time()
            for entry in entries:
                self.state.apply_entry(entry.index, decode_entry(entry.data))
                if trio.current_time() - since >= APPLY_SLICE_S:
                    # Entries are atomic, so a reader between two of them sees a state the
                    # log really had; yielding keeps requests and heartbeats on time while
                    # a long run of entries (a node catching up) is applied.
                    self._applied.set()
                    self._applied = trio.Event()
                    await trio.lowlevel.checkpoint()
                    since = trio.current_time()
            self._since_snapshot += len(entries)
            if self._since_snapshot >= self._snapshot_every:
                self._take_snapshot(entries[-1].term)
            self._wake_waiters()

    def _wake_waiters(self) -> None:
        self._applied.set()
        self._applied = trio.Event()

    def _take_snapshot(self, term: int) -> None:
        self.source.save_snapshot(
            Snapshot(self.state.last_applied_index, term, self.state.to_snapshot())
        )
        self._since_snapshot = 0

    def _restore(self) -> None:
        snapshot = self.source.latest_snapshot()
        if snapshot is None:
            raise RuntimeError("entries were compacted but no snapshot is available")
        log.info("restoring metadata from the snapshot at index %d", snapshot.index)
        self.state = MetadataState.from_snapshot(snapshot.data)
        self._since_snapshot = 0
