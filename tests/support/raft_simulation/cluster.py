"""The simulation engine: N Raft cores over a simulated network and disks, in virtual time.

Virtual time advances from event to event (ticks, message arrivals, disk syncs, and
whatever the scenario schedules) taken from one priority queue; ties are broken by
insertion order, and every random choice comes from ``random.Random(seed)``, so a seed
replays exactly. The engine carries out the Ready contract for each node the way a real
driver does -- write, sync if asked, only then send, apply and advance -- and runs the
safety checker after every event. What happens to the cluster (faults, clients, the
recovery deadline) is the scenario's business (``scenario.py``).
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from raft_simulation.checks import LivenessFailure, LogView, SafetyChecker
from raft_simulation.mutants import CoreFault, core_type
from raft_simulation.network import NetworkProfile, SimNetwork
from raft_simulation.node import SimNode
from rillet.raft.core import RaftCore
from rillet.raft.core_config import Config
from rillet.raft.core_errors import ProposalDropped
from rillet.raft.errors import NotLeaderError
from rillet.raft.messages import LogEntry, Message, describe
from rillet.raft.quorum import Snapshot
from rillet.raft.raft_log import RaftLog
from rillet.raft.ready import Ready, Role

TICK_US = 10_000


@dataclass(frozen=True, slots=True)
class SimulationParams:
    nodes: int | None = None  # None: 3 or 5, chosen by the seed
    chaos_ticks: int = 200
    liveness_bound_ticks: int = 150
    fault: CoreFault = CoreFault.NONE
    torn_writes: bool = True
    # A crash keeps a random prefix of the unsynced writes; with this, none of them.
    lose_all_unsynced: bool = False
    # Crash every node at once during the chaos phase: None lets the seed decide (30%).
    crash_all: bool | None = None
    # Voter membership changes during chaos: 4 to 6 nodes, 1 to 5 of them voters at first,
    # every node an observer when not a voter (see scenario.py).
    membership: bool = False
    trace: bool = False


@dataclass(slots=True)
class RunStats:
    seed: int
    nodes: int
    virtual_ticks: int = 0
    leaders: int = 0
    max_term: int = 0
    committed: int = 0
    crashes: int = 0
    crash_all: bool = False
    partitions: int = 0
    messages: int = 0
    dropped: int = 0
    snapshots_installed: int = 0
    reads_checked: int = 0
    lost_writes: int = 0
    torn_writes: int = 0
    recovery_ticks: int = 0
    down_reports: int = 0  # report_leader_down calls on live nodes
    false_down_reports: int = 0  # ... about a node that was up at the time
    down_reports_acted_on: int = 0  # ... by a follower of that node
    false_down_reports_acted_on: int = 0
    config_changes: int = 0  # configuration entries committed
    config_changes_refused: int = 0  # MembershipChangeRefused (own-term rule, one at a time)
    leaders_removed: int = 0  # committed removals of the leader that proposed them
    wipes: int = 0  # voters whose disk was replaced (then removed and maybe added back)


class SimCluster:
    def __init__(self, seed: int, params: SimulationParams) -> None:
        self.seed = seed
        self.params = params
        self.rng = random.Random(seed)
        rng = self.rng
        count = params.nodes or rng.choice([3, 3, 5])
        # Every node of the run (voter or not); the name predates membership changes.
        self.voters = list(range(1, count + 1))
        bootstrap = self.voters
        self.config = Config(
            election_timeout_ticks=10,
            heartbeat_interval_ticks=rng.choice([1, 1, 2, 3]),
            pre_vote=rng.random() < 0.8,
            check_quorum=rng.random() < 0.8,
            max_append_entries=rng.choice([1, 1, 3, 64]),
            max_inflight_appends=rng.choice([1, 4, 64]),
        )
        profile = NetworkProfile.random(rng)
        core = core_type(params.fault)
        if params.membership:
            extra = rng.choice([1, 1, 2, 3])
            self.voters = list(range(1, count + extra + 1))
            bootstrap = self.voters[: rng.choice([1, 3, 3, min(5, count)])]
        self.network = SimNetwork(self.voters, rng, profile)
        self.bootstrap_voters = bootstrap
        self.nodes = {
            n: SimNode(
                n,
                bootstrap,
                self.config,
                core,
                observers=self.voters if params.membership else None,
                directory_id=f"{n:04x}".ljust(32, "0") if params.membership else "",
            )
            for n in self.voters
        }
        self.checker = SafetyChecker(self._log_views, self._directory_of)
        self.compact_every_entries = rng.choice([3, 10, 40])
        self.max_sync_us = rng.choice([200, 2_000, 8_000])
        self.now_us = 0
        self.done = False
        # Called with (node, term) when a node is first seen leading a term.
        self.on_new_leader: Callable[[int, int], None] | None = None
        self.trace: deque[str] = deque(maxlen=None if params.trace else 60)
        self.stats = RunStats(seed, count)
        self._queue: list[tuple[int, int, Callable[..., None], tuple[object, ...]]] = []
        self._seq = 0
        self._down_logs: dict[int, RaftLog] = {}
        self._leader_terms_seen: set[int] = set()
        self._reads: dict[tuple[int, int, bytes], int] = {}
        self._next_request = 0

    # -- events -------------------------------------------------------------------------

    def at(self, time_us: int, action: Callable[..., None], *args: object) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (time_us, self._seq, action, args))

    def log(self, text: str) -> None:
        self.trace.append(f"{self.now_us / 1000:9.3f}ms {text}")

    def run(self, deadline_us: int, liveness_report: Callable[[], str]) -> RunStats:
        """Process events until the scenario sets ``done``; past ``deadline_us`` the run
        has failed to make progress."""
        for node in self.voters:
            self.start(node)
        # A message storm (an append/reject loop amplified by duplication, say) would
        # otherwise run forever without virtual time reaching the deadline.
        max_events = 5_000 * len(self.voters) * (deadline_us // TICK_US)
        events = 0
        while self._queue and not self.done:
            events += 1
            if events > max_events:
                raise LivenessFailure(f"event storm: over {max_events} events")
            time_us, _, action, args = heapq.heappop(self._queue)
            if time_us > deadline_us:
                raise LivenessFailure(liveness_report())
            self.now_us = time_us
            action(*args)
        self._finish()
        return self.stats

    # -- nodes --------------------------------------------------------------------------

    def start(self, node: int) -> None:
        sim = self.nodes[node]
        if sim.up:
            return
        core = sim.start(random.Random(self.rng.getrandbits(64)))
        self._down_logs.pop(node, None)
        self.log(f"n{node} started (incarnation {sim.incarnation}, term {core.term})")
        self.checker.node_restarted(node, core)
        self.at(self.now_us + self.rng.randrange(1, TICK_US), self._tick, node, sim.incarnation)
        self._pump(node)

    def crash(self, node: int, incarnation: int | None = None) -> None:
        """Power loss on ``node`` (only if still in ``incarnation``, when given)."""
        sim = self.nodes[node]
        if sim.up and incarnation in (None, sim.incarnation):
            self.log(f"n{node} crashed ({sim.disk.unsynced_writes()} unsynced writes)")
            sim.crash(self.rng, self.params.torn_writes, self.params.lose_all_unsynced)
            self._down_logs.pop(node, None)
            # The others' transports notice the refused port, mostly within two ticks.
            for observer in self.voters:
                if observer != node and self.rng.random() < 0.8:
                    delay_us = self.rng.randrange(2 * TICK_US)
                    self.at(self.now_us + delay_us, self.report_down, observer, node)

    def wipe(self, node: int) -> None:
        """Crash ``node`` and replace its disk: it restarts empty, under a new directory."""
        self.crash(node)
        sim = self.nodes[node]
        sim.wipe()
        self._down_logs.pop(node, None)
        self.log(f"n{node} wiped (new directory {sim.directory_id[:8]})")

    def report_down(self, observer: int, node: int) -> None:
        """``observer``'s transport says ``node``'s process is gone. Truthful when a crash
        scheduled it (unless ``node`` has restarted since); the scenario also makes false
        ones, as an unreliable detector would: safety must not depend on them."""
        core = self.nodes[observer].core
        if core is None:
            return
        self.stats.down_reports += 1
        truth = "" if not self.nodes[node].up else " (false: it is up)"
        self.stats.false_down_reports += bool(truth)
        self.log(f"n{observer} hears n{node} is down{truth}")
        acted = core.role is Role.FOLLOWER and core.leader_id == node
        self.stats.down_reports_acted_on += acted
        self.stats.false_down_reports_acted_on += acted and bool(truth)
        core.report_leader_down(node)
        self.after(observer)

    def core(self, node: int) -> RaftCore | None:
        return self.nodes[node].core

    def leader(self) -> int | None:
        """The live leader of the highest term, if any."""
        best: int | None = None
        for node, sim in self.nodes.items():
            core = sim.core
            if core is not None and core.role is Role.LEADER:
                best_core = self.nodes[best].core if best is not None else None
                if best_core is None or core.term > best_core.term:
                    best = node
        return best

    def after(self, node: int) -> None:
        """Something happened on ``node``: check safety, then run its Ready loop."""
        core = self.nodes[node].core
        if core is None:
            return
        self.checker.observe(node, core)
        if core.role is Role.LEADER and core.term not in self._leader_terms_seen:
            self._leader_terms_seen.add(core.term)
            if self.on_new_leader is not None:
                self.on_new_leader(node, core.term)
        self._pump(node)

    def _tick(self, node: int, incarnation: int) -> None:
        sim = self.nodes[node]
        if sim.core is None or sim.incarnation != incarnation:
            return
        if self.params.trace:
            self.log(f"tick n{node}")
        sim.core.tick()
        self.after(node)
        self.at(self.now_us + TICK_US, self._tick, node, incarnation)

    def _directory_of(self, node: int) -> str:
        return self.nodes[node].directory_id

    def _log_views(self) -> list[tuple[int, LogView]]:
        views: list[tuple[int, LogView]] = []
        for node, sim in self.nodes.items():
            if sim.core is not None:
                views.append((node, sim.core.raft_log))
            else:
                if node not in self._down_logs:
                    self._down_logs[node] = RaftLog(sim.disk.view)
                views.append((node, self._down_logs[node]))
        return views

    # -- client requests ----------------------------------------------------------------

    def propose(self, node: int) -> LogEntry | None:
        core = self.nodes[node].core
        if core is None:
            return None
        self._next_request += 1
        try:
            entry = core.propose(b"v%d" % self._next_request)
        except (NotLeaderError, ProposalDropped):
            return None
        self.after(node)
        return entry

    def read(self, node: int) -> None:
        """Issue a ReadIndex read; when released, it must not predate any commit that was
        already known when it was issued (checked in ``_complete``)."""
        sim = self.nodes[node]
        if sim.core is None:
            return
        self._next_request += 1
        context = b"r%d" % self._next_request
        try:
            sim.core.read_index(context)
        except NotLeaderError:
            return
        self._reads[(node, sim.incarnation, context)] = self.checker.max_committed_index
        self.after(node)

    # -- the Ready contract -------------------------------------------------------------

    def _pump(self, node: int) -> None:
        sim = self.nodes[node]
        core = sim.core
        while core is not None and sim.in_flight is None and core.has_ready():
            ready = core.ready()
            self.checker.on_entries_written(node, core, ready.entries)
            sim.write_ready(ready)
            if ready.must_sync:
                sim.in_flight = ready
                sync_at_us = self.now_us + self.rng.randint(20, self.max_sync_us)
                self.at(sync_at_us, self._synced, node, sim.incarnation)
                return
            self._complete(node, ready)

    def _synced(self, node: int, incarnation: int) -> None:
        sim = self.nodes[node]
        if sim.incarnation == incarnation and sim.in_flight is not None:
            ready, sim.in_flight = sim.in_flight, None
            self._complete(node, ready)
            self._pump(node)

    def _complete(self, node: int, ready: Ready) -> None:
        sim = self.nodes[node]
        core = sim.core
        assert core is not None
        if ready.must_sync:
            sim.disk.sync()
        for message in ready.messages:
            self._send(message)
        if ready.snapshot is not None:
            self.checker.on_snapshot_restored(node, ready.snapshot.index, ready.snapshot.data[8:])
        for _ in sim.apply_ready(ready):
            self.checker.on_applied(node, sim.state.index, sim.state.digest)
        for read in ready.read_states:
            issued = self._reads.pop((node, sim.incarnation, read.context), None)
            if issued is not None:
                self.checker.on_read_released(node, read.index, issued)
        core.advance(ready)
        self._maybe_compact(node, core)
        self.checker.observe(node, core)

    def _maybe_compact(self, node: int, core: RaftCore) -> None:
        state = self.nodes[node].state
        log = core.raft_log
        if state.index != log.applied or log.pending_compaction is not None:
            return
        if log.applied - log.snapshot().index >= self.compact_every_entries:
            term = log.term(log.applied)
            assert term is not None
            core.compact(Snapshot(log.applied, term, state.snapshot_data()))

    # -- network ------------------------------------------------------------------------

    def _send(self, message: Message) -> None:
        self.stats.messages += 1
        for delay_us in self.network.delays_us(message):
            self.at(self.now_us + delay_us, self._deliver, message)

    def _deliver(self, message: Message) -> None:
        sim = self.nodes[message.recipient]
        if sim.core is None or self.network.is_blocked(message.sender, message.recipient):
            return
        if self.params.trace:
            self.log(describe(message))
        sim.core.step(message)
        self.after(message.recipient)

    def partition(self, groups: list[list[int]], buffering: bool) -> None:
        self.network.partition(groups, buffering)
        self.stats.partitions += 1

    def heal(self) -> None:
        held = self.network.heal()
        self.log(f"heal ({len(held)} held messages released)")
        for message in held:
            self.at(self.now_us + self.rng.randint(1, 5_000), self._deliver, message)

    # -- results ------------------------------------------------------------------------

    def _finish(self) -> None:
        leader = self.leader()
        core = self.nodes[leader].core if leader is not None else None
        if leader is not None and core is not None:
            self.checker.check_final(leader, core)
        stats = self.stats
        stats.virtual_ticks = self.now_us // TICK_US
        stats.recovery_ticks = stats.virtual_ticks - self.params.chaos_ticks
        stats.leaders = len(self.checker.leader_of_term)
        stats.max_term = max(self.checker.leader_of_term, default=0)
        stats.committed = self.checker.max_committed_index
        stats.config_changes = self.checker.config_changes_committed
        stats.leaders_removed = self.checker.leader_self_removals
        stats.reads_checked = self.checker.reads_checked
        stats.dropped = self.network.stats.dropped + self.network.stats.blocked
        for sim in self.nodes.values():
            stats.crashes += sim.crashes
            stats.wipes += sim.wipes
            stats.snapshots_installed += sim.snapshots_installed
            stats.lost_writes += sim.disk.stats.lost_writes
            stats.torn_writes += sim.disk.stats.torn_writes
