"""A deterministic, seeded in-memory ``Quorum`` for testing everything above raft/.

One ``SimCluster`` holds the replicated log; each voter gets a ``SimQuorum`` view. Tests
drive the faults: ``elect`` changes the leader (bumping the term), ``commit_delay_s`` holds
proposals pending (use trio's MockClock for virtual time), and on a leader change each
pending proposal is, by the seeded RNG, either committed or lost while its proposer hears
ProposalOutcomeUnknown, which is exactly the ambiguity a real Raft client faces.

Given the order in which proposals arrive, a run is fully determined by the seed. trio
randomizes the order of tasks that become runnable at the same instant, so a test that needs
an exact replay issues its proposals at distinct (virtual) times.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import trio

from rillet.raft.errors import NotLeaderError, ProposalOutcomeUnknown, SnapshotRequired
from rillet.raft.quorum import Entry, Leadership, Quorum, Snapshot


@dataclass(slots=True)
class _Pending:
    data: bytes
    term: int
    done: trio.Event = field(default_factory=trio.Event)
    index: int | None = None
    error: BaseException | None = None


class SimCluster:
    def __init__(
        self,
        voter_ids: list[int],
        rng: random.Random,
        commit_delay_s: float = 0.0,
        commit_on_leader_change_probability: float = 0.5,
    ) -> None:
        if not voter_ids:
            raise ValueError("a cluster needs at least one voter")
        self.voter_ids = frozenset(voter_ids)
        self.rng = rng
        self.commit_delay_s = commit_delay_s
        self.commit_on_change = commit_on_leader_change_probability
        self.log: list[Entry] = []
        self.term = 1
        self.leader_id: int | None = min(voter_ids)
        self._pending: list[_Pending] = []
        self._changed = trio.Event()
        self.members = {n: SimQuorum(self, n) for n in voter_ids}
        self.lost_proposals = 0

    def member(self, node_id: int) -> SimQuorum:
        return self.members[node_id]

    @property
    def commit_index(self) -> int:
        return len(self.log)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def wait_changed(self) -> None:
        await self._changed.wait()

    def _commit(self, data: bytes, term: int) -> int:
        self.log.append(Entry(len(self.log) + 1, term, data))
        return len(self.log)

    def elect(self, node_id: int | None) -> int:
        """Make ``node_id`` leader (None: no leader) in a new term; returns the term.

        Pending proposals of the old term are resolved by the RNG: committed (they had
        reached a majority) or lost. Either way their proposers get ProposalOutcomeUnknown.
        """
        if node_id is not None and node_id not in self.voter_ids:
            raise ValueError(f"{node_id} is not a voter")
        pending, self._pending = self._pending, []
        for p in pending:
            if self.rng.random() < self.commit_on_change:
                p.index = self._commit(p.data, p.term)
            else:
                self.lost_proposals += 1
            p.error = ProposalOutcomeUnknown("leadership changed while the proposal was pending")
            p.done.set()
        self.term += 1
        self.leader_id = node_id
        self._notify()
        return self.term

    async def _propose(self, node_id: int, data: bytes) -> int:
        if self.leader_id != node_id:
            raise NotLeaderError(self.leader_id, self.term)
        if self.commit_delay_s <= 0:
            index = self._commit(data, self.term)
            self._notify()
            await trio.lowlevel.checkpoint()
            return index
        pending = _Pending(data, self.term)
        self._pending.append(pending)
        with trio.move_on_after(self.commit_delay_s):
            await pending.done.wait()
        if not pending.done.is_set():
            # Still pending after the delay and no leader change: it commits now.
            self._pending.remove(pending)
            pending.index = self._commit(pending.data, pending.term)
            self._notify()
            return pending.index
        if pending.error is not None:
            raise pending.error
        assert pending.index is not None
        return pending.index


class SimQuorum(Quorum):
    def __init__(self, cluster: SimCluster, node_id: int) -> None:
        self._cluster = cluster
        self.node_id = node_id
        self._snapshot: Snapshot | None = None

    @property
    def voters(self) -> frozenset[int]:
        return self._cluster.voter_ids

    def leadership(self) -> Leadership:
        return Leadership(self._cluster.leader_id, self._cluster.term)

    async def propose(self, data: bytes) -> int:
        return await self._cluster._propose(self.node_id, data)

    def commit_index(self) -> int:
        return self._cluster.commit_index

    async def read_committed(self, after_index: int, max_entries: int = 1000) -> list[Entry]:
        if self._snapshot is not None and after_index < self._snapshot.index:
            raise SnapshotRequired(self._snapshot.index)
        while self._cluster.commit_index <= after_index:
            await self._cluster.wait_changed()
        return self._cluster.log[after_index : after_index + max_entries]

    async def wait_for_leadership_change(self, known: Leadership) -> Leadership:
        while self.leadership() == known:
            await self._cluster.wait_changed()
        return self.leadership()

    def save_snapshot(self, snapshot: Snapshot) -> None:
        if snapshot.index > self._cluster.commit_index:
            raise ValueError("cannot snapshot beyond the commit index")
        self._snapshot = snapshot

    def latest_snapshot(self) -> Snapshot | None:
        return self._snapshot
