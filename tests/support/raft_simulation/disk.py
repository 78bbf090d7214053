"""A simulated disk: what a node wrote, what it synced, and what survives a crash.

The running node sees every write at once (the page cache). ``sync`` makes the writes so far
durable. A crash keeps the durable state plus, at the seeded RNG's choice, some prefix of
the unsynced writes -- the device may have flushed part of them on its own -- and, with
``torn_writes``, the last surviving append may be cut inside its batch of entries. Writes
are kept in order (as in a write-ahead log), so what survives is always a prefix of what
was written. The Raft core must be correct for every one of those outcomes; in particular
anything it sent a message about must have been synced first.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from rillet.raft.log_storage import MemoryStorage
from rillet.raft.messages import HardState, LogEntry
from rillet.raft.quorum import Snapshot


@dataclass(frozen=True, slots=True)
class _Write:
    hard_state: HardState | None = None
    entries: tuple[LogEntry, ...] = ()
    snapshot: Snapshot | None = None

    def apply_to(self, storage: MemoryStorage) -> None:
        if self.snapshot is not None:
            storage.apply_snapshot(self.snapshot)
        if self.entries:
            storage.append(self.entries)
        if self.hard_state is not None:
            storage.set_hard_state(self.hard_state)


@dataclass(slots=True)
class DiskStats:
    writes: int = 0
    syncs: int = 0
    lost_writes: int = 0
    torn_writes: int = 0


class SimDisk:
    def __init__(self) -> None:
        self._durable = MemoryStorage()
        self._unsynced: list[_Write] = []
        self.view = MemoryStorage()  # what the running node reads: every write so far
        self.stats = DiskStats()

    def _write(self, write: _Write) -> None:
        write.apply_to(self.view)
        self._unsynced.append(write)
        self.stats.writes += 1

    def write_snapshot(self, snapshot: Snapshot) -> None:
        self._write(_Write(snapshot=snapshot))

    def write_entries(self, entries: tuple[LogEntry, ...]) -> None:
        if entries:
            self._write(_Write(entries=entries))

    def write_hard_state(self, hard_state: HardState) -> None:
        self._write(_Write(hard_state=hard_state))

    def sync(self) -> None:
        for write in self._unsynced:
            write.apply_to(self._durable)
        self._unsynced = []
        self.stats.syncs += 1

    def unsynced_writes(self) -> int:
        return len(self._unsynced)

    def crash(self, rng: random.Random, torn_writes: bool, lose_all_unsynced: bool = False) -> None:
        """Power loss: keep the durable state and a random prefix of the unsynced writes
        (none of them with ``lose_all_unsynced``)."""
        pending = self._unsynced
        survivors = 0 if lose_all_unsynced else rng.randint(0, len(pending))
        for write in pending[:survivors]:
            write.apply_to(self._durable)
        if (
            torn_writes
            and not lose_all_unsynced
            and survivors < len(pending)
            and len(pending[survivors].entries) > 1
        ):
            torn = pending[survivors]
            kept = rng.randint(1, len(torn.entries) - 1)
            _Write(entries=torn.entries[:kept]).apply_to(self._durable)
            self.stats.torn_writes += 1
        self.stats.lost_writes += len(pending) - survivors
        self._unsynced = []
        self.view = self._durable.copy()
