"""One simulated node: a Raft core over a simulated disk, and a tiny state machine.

The state machine folds every applied entry into a digest chain, so two nodes that applied
the same entries in the same order have the same digest at every index; its snapshot is
(index, digest). The node carries out the Ready contract like a real driver: it writes the
Ready to disk (unsynced), waits for the sync when the Ready says so, and only then sends the
Ready's messages, applies its committed entries and advances. A crash can strike while a
sync is pending; then the messages are never sent.
"""

from __future__ import annotations

import hashlib
import random

from raft_simulation.disk import SimDisk
from rillet.raft.core import RaftCore
from rillet.raft.core_config import Config
from rillet.raft.messages import EntryKind, LogEntry
from rillet.raft.quorum import Snapshot
from rillet.raft.ready import Ready

_DIGEST_BYTES = 16


class DigestStateMachine:
    def __init__(self, index: int = 0, digest: bytes = bytes(_DIGEST_BYTES)) -> None:
        self.index = index
        self.digest = digest

    def apply(self, entry: LogEntry) -> None:
        h = hashlib.blake2b(self.digest, digest_size=_DIGEST_BYTES)
        h.update(b"%d/%d/%d/" % (entry.index, entry.term, int(entry.kind)))
        h.update(entry.data)
        self.index = entry.index
        self.digest = h.digest()

    def snapshot_data(self) -> bytes:
        return self.index.to_bytes(8, "big") + self.digest

    @classmethod
    def from_snapshot(cls, snapshot: Snapshot) -> DigestStateMachine:
        if snapshot.index == 0:
            return cls()
        index = int.from_bytes(snapshot.data[:8], "big")
        if index != snapshot.index:
            raise ValueError(f"snapshot data is for {index}, metadata says {snapshot.index}")
        return cls(index, snapshot.data[8:])


class SimNode:
    def __init__(
        self,
        node_id: int,
        voters: list[int],
        config: Config,
        core_type: type[RaftCore] = RaftCore,
        observers: list[int] | None = None,
        directory_id: str = "",
    ) -> None:
        """``voters`` is the bootstrap voter set; ``observers`` every node the leader sends
        the log to whether it votes or not."""
        self.id = node_id
        self.voters = voters
        self.observers = observers or []
        self.directory_id = directory_id
        self.config = config
        self.core_type = core_type
        self.disk = SimDisk()
        self.core: RaftCore | None = None
        self.state = DigestStateMachine()
        self.incarnation = 0
        self.in_flight: Ready | None = None  # taken from the core, waiting for its sync
        self.crashes = 0
        self.wipes = 0
        self.snapshots_installed = 0
        self.noops_applied = 0

    @property
    def up(self) -> bool:
        return self.core is not None

    def start(self, rng: random.Random) -> RaftCore:
        """(Re)start from what the disk holds: the state machine from the snapshot, the
        core from the log and hard state; committed entries are re-applied from there."""
        self.incarnation += 1
        self.state = DigestStateMachine.from_snapshot(self.disk.view.snapshot())
        self.core = self.core_type(
            self.id,
            self.voters,
            self.disk.view,
            self.config,
            rng,
            directory_id=self.directory_id,
            observers=self.observers,
        )
        self.in_flight = None
        return self.core

    def crash(self, rng: random.Random, torn_writes: bool, lose_all_unsynced: bool) -> None:
        self.core = None
        self.in_flight = None
        self.incarnation += 1
        self.crashes += 1
        self.disk.crash(rng, torn_writes, lose_all_unsynced)

    def wipe(self) -> None:
        """The disk is replaced (the node must be down): it comes back empty, under a new
        directory id, as a node formatted again does."""
        stats = self.disk.stats
        # Formatted to join, not to bootstrap: no voter set until it learns the cluster's
        # (with the configured one it could elect itself, or be elected, on an empty log).
        self.voters = []
        self.disk = SimDisk()
        self.disk.stats = stats
        self.wipes += 1
        self.directory_id = f"{self.id:04x}{self.wipes:04x}".ljust(32, "0")

    def write_ready(self, ready: Ready) -> None:
        """Step 1 of the Ready contract: hand everything to the disk (not yet synced)."""
        if ready.snapshot is not None:
            self.disk.write_snapshot(ready.snapshot)
        if ready.compaction is not None:
            self.disk.write_snapshot(ready.compaction)
        self.disk.write_entries(ready.entries)
        if ready.hard_state is not None:
            self.disk.write_hard_state(ready.hard_state)

    def apply_ready(self, ready: Ready) -> list[int]:
        """Step 4: restore or apply; returns the indexes applied (for the checker)."""
        applied = []
        if ready.snapshot is not None:
            self.state = DigestStateMachine.from_snapshot(ready.snapshot)
            self.snapshots_installed += 1
        for entry in ready.committed_entries:
            if entry.index <= self.state.index:
                continue
            if entry.index != self.state.index + 1:
                raise ValueError(
                    f"n{self.id} asked to apply {entry.index} after {self.state.index}"
                )
            self.state.apply(entry)
            if entry.kind is EntryKind.LEADER_NOOP:
                self.noops_applied += 1
            applied.append(entry.index)
        return applied
