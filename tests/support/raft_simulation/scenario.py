"""What happens to a simulated cluster: clients, a nemesis, then recovery and a deadline.

1. Chaos (``chaos_ticks``): clients propose (mostly to the leader, sometimes to anyone) and
   issue ReadIndex reads; a nemesis partitions the network (often isolating the leader,
   sometimes buffering what it blocks, sometimes one way only) for long enough that
   elections happen on both sides, crashes nodes (unsynced writes lost, possibly torn) and
   restarts them, sometimes crashes every node at once, crashes leaders the moment they
   win, and asks leaders to hand over leadership. The network itself drops, delays,
   duplicates, reorders and replays messages per a seeded profile. The nodes' failure
   detectors report crashed nodes as down (``report_leader_down``), and sometimes, wrongly,
   live ones -- mostly the leader, the only report that changes anything. With
   ``membership``, the leader is also asked to add a voter (a node that is not one) or to
   remove one (itself included), sometimes the moment it wins, before its no-op commits.
2. Recovery: faults stop, every node restarts, the network heals and calms down. Within
   ``liveness_bound_ticks`` a leader must commit a new proposal and every node must apply
   it; then the run ends with a final check that no committed entry was lost.

Every choice comes from the cluster's seeded RNG.
"""

from __future__ import annotations

from raft_simulation.cluster import TICK_US, RunStats, SimCluster
from raft_simulation.network import CALM
from rillet.raft.core_errors import MembershipChangeRefused
from rillet.raft.messages import LogEntry
from rillet.raft.ready import Role


class Scenario:
    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster
        rng = cluster.rng
        chaos_ticks = cluster.params.chaos_ticks
        crash_all = cluster.params.crash_all
        if crash_all is None:
            crash_all = rng.random() < 0.3
        self.crash_all_at_tick = rng.randrange(10, max(11, chaos_ticks - 20)) if crash_all else -1
        # Crashing leaders right after they win leaves entries of terms nobody else has:
        # the raw material of the paper's Figure 8.
        self.new_leader_crash_probability = rng.choice([0.1, 0.3, 0.6])
        self.recovering = False
        self._network_generation = 0
        self._network_healed = True
        self._liveness_entry: LogEntry | None = None
        self._figure8_old_leader: int | None = None
        self._quiet_until_us = 0  # a multi-step move is playing out: no other faults
        # A voter whose disk was replaced, as (node id, old directory id), until removed.
        self._wiped: tuple[int, str] | None = None
        cluster.on_new_leader = self._on_new_leader

    def run(self) -> RunStats:
        cluster = self.cluster
        rng = cluster.rng
        cluster.at(rng.randrange(TICK_US, 5 * TICK_US), self._nemesis)
        cluster.at(rng.randrange(TICK_US), self._client)
        chaos_end_us = cluster.params.chaos_ticks * TICK_US
        cluster.at(chaos_end_us, self._recover)
        deadline_us = chaos_end_us + cluster.params.liveness_bound_ticks * TICK_US
        return cluster.run(deadline_us, self._liveness_report)

    # -- clients ------------------------------------------------------------------------

    def _client(self) -> None:
        cluster = self.cluster
        rng = cluster.rng
        if self.recovering:
            return
        cluster.at(cluster.now_us + rng.randrange(TICK_US // 2, 3 * TICK_US), self._client)
        up = [n for n, s in cluster.nodes.items() if s.up]
        if not up:
            return
        leader = cluster.leader()
        target = leader if leader is not None and rng.random() < 0.8 else rng.choice(up)
        if rng.random() < 0.25:
            cluster.read(rng.choice(up))
        else:
            for _ in range(rng.choice([1, 1, 1, 5])):
                cluster.propose(target)

    # -- faults -------------------------------------------------------------------------

    def _nemesis(self) -> None:
        cluster = self.cluster
        rng = cluster.rng
        if self.recovering:
            return
        cluster.at(cluster.now_us + rng.randrange(TICK_US, 10 * TICK_US), self._nemesis)
        if 0 <= self.crash_all_at_tick <= cluster.now_us // TICK_US:
            self.crash_all_at_tick = -1
            cluster.stats.crash_all = True
            cluster.log("nemesis: crash every node")
            for node in cluster.voters:
                self._crash_and_restart(node, rng.randrange(1, 20))
            return
        if cluster.now_us < self._quiet_until_us:
            return
        leader = cluster.leader()
        if cluster.params.membership and leader is not None and rng.random() < 0.35:
            if rng.random() < 0.3:
                self._wipe_voter(leader)
            else:
                self._change_membership(leader)
            return
        action = rng.random()
        if action < 0.1 and self._network_healed and leader is not None:
            self._figure8(leader)
        elif action < 0.35 and self._network_healed:
            self._network_fault(leader)
        elif action < 0.65:
            victim = leader if leader is not None and rng.random() < 0.5 else None
            self._crash_and_restart(victim or rng.choice(cluster.voters), rng.randrange(1, 30))
        elif action < 0.75 and leader is not None:
            core = cluster.core(leader)
            assert core is not None
            targets = [n for n in sorted(core.voters) if n != leader]
            if targets:
                target = rng.choice(targets)
                cluster.log(f"nemesis: n{leader} transfers leadership to n{target}")
                core.transfer_leadership(target)
                cluster.after(leader)
        elif action < 0.85:
            # A false "process gone" report: the detector is not to be trusted.
            up = [n for n in cluster.voters if cluster.nodes[n].up]
            if len(up) >= 2:
                observer = rng.choice(up)
                others = [n for n in cluster.voters if n != observer]
                named = leader if leader in others and rng.random() < 0.7 else rng.choice(others)
                cluster.report_down(observer, named)

    def _change_membership(self, leader: int) -> None:
        """Ask the leader to add a node that is not a voter or remove a voter (itself
        included), keeping between one and five voters."""
        cluster = self.cluster
        rng = cluster.rng
        core = cluster.core(leader)
        assert core is not None
        voters = sorted(core.voters)
        others = [n for n in cluster.voters if n not in voters]
        add = others and (len(voters) == 1 or (len(voters) < 5 and rng.random() < 0.5))
        wiped = self._wiped
        if wiped is not None and not core.configuration().has(*wiped):
            self._wiped = wiped = None  # replaced: it is gone from the leader's voters
            if self.recovering:
                return  # recovery only finishes a replacement
        try:
            if wiped is not None:
                # Replace the dead voter before anything else changes.
                cluster.log(f"nemesis: n{leader} removes wiped voter n{wiped[0]}/{wiped[1][:8]}")
                core.remove_voter(*wiped)
            elif add:
                node = rng.choice(others)
                cluster.log(f"nemesis: n{leader} adds voter n{node}")
                core.add_voter(node, cluster.nodes[node].directory_id)
            elif len(voters) > 1:
                node = rng.choice(voters)
                cluster.log(f"nemesis: n{leader} removes voter n{node}")
                core.remove_voter(node, cluster.nodes[node].directory_id)
        except MembershipChangeRefused as refused:
            cluster.stats.config_changes_refused += 1
            cluster.log(f"  refused: {refused}")
        cluster.after(leader)

    def _crash_and_restart(
        self, node: int, down_ticks: int, incarnation: int | None = None
    ) -> None:
        cluster = self.cluster
        if self.recovering or not cluster.nodes[node].up:
            return
        if incarnation not in (None, cluster.nodes[node].incarnation):
            return
        cluster.crash(node)
        cluster.at(cluster.now_us + down_ticks * TICK_US, self._restart, node)

    def _restart(self, node: int) -> None:
        self.cluster.start(node)

    def _figure8(self, leader: int) -> None:
        """The paper's Figure 8, as a move: the leader takes proposals it cannot replicate
        (isolated); its successor dies the moment it wins, its no-op unsent; the old leader
        rejoins and, becoming leader again, replicates its old-term entries. A core that
        commits those by counting replicas is caught when the dead successor's log could
        still win an election."""
        cluster = self.cluster
        for _ in range(cluster.rng.randint(1, 3)):
            cluster.propose(leader)
        self._figure8_old_leader = leader
        self._quiet_until_us = cluster.now_us + 40 * TICK_US
        self._network_generation += 1
        self._network_healed = False
        cluster.partition([[leader], [n for n in cluster.voters if n != leader]], False)
        cluster.log(f"nemesis: figure 8 -- isolate leader n{leader}")
        cluster.at(cluster.now_us + 40 * TICK_US, self._heal, self._network_generation)

    def _on_new_leader(self, node: int, term: int) -> None:
        cluster = self.cluster
        rng = cluster.rng
        if self.recovering:
            return
        if self._figure8_old_leader not in (None, node):
            self._figure8_old_leader = None
            self._quiet_until_us = cluster.now_us + 30 * TICK_US
            cluster.log(f"nemesis: figure 8 -- n{node} dies as it wins; old leader rejoins")
            down_ticks = rng.randrange(10, 40)
            cluster.at(cluster.now_us, self._crash_and_restart, node, down_ticks)
            cluster.at(
                cluster.now_us + rng.randrange(0, TICK_US), self._heal, self._network_generation
            )
            return
        if cluster.params.membership and rng.random() < 0.3:
            # At once, before the no-op commits: the own-term rule must refuse it.
            cluster.at(cluster.now_us, self._change_membership_if_leading, node, term)
        if rng.random() >= self.new_leader_crash_probability:
            return
        # Often at once: the new leader's no-op may then survive only on its own disk
        # (an unsynced write that happened to reach the platter), never sent anywhere.
        delay_us = 0 if rng.random() < 0.5 else rng.randrange(0, 2 * TICK_US)
        incarnation = cluster.nodes[node].incarnation
        down_ticks = rng.randrange(1, 30)
        cluster.at(
            cluster.now_us + delay_us, self._crash_and_restart, node, down_ticks, incarnation
        )

    def _wipe_voter(self, leader: int) -> None:
        """Replace the disk of a voter known by its directory id (one added by a change),
        when the configuration is committed, has at least three voters and no other wiped
        voter: the new directory must not vote as the old voter, and the old identity must
        be removed (the nemesis does that next) before a second loss could stop the
        cluster for good. (A bootstrap voter has no known directory, so a wiped one would
        vote as its old self: that is the documented limit, not tested here.)"""
        cluster = self.cluster
        core = cluster.core(leader)
        assert core is not None
        configuration = core.configuration()
        log = core.raft_log
        if self._wiped is not None or len(configuration.voters) < 3 or core.catching_up:
            return
        if log.configuration_index() > log.committed:
            return
        known = [v for v in configuration.voters if v.directory_id and v.node_id != leader]
        if not known:
            return
        victim = cluster.rng.choice(known)
        self._wiped = (victim.node_id, victim.directory_id)
        cluster.wipe(victim.node_id)
        cluster.at(
            cluster.now_us + cluster.rng.randrange(1, 30) * TICK_US, self._restart, victim.node_id
        )

    def _change_membership_if_leading(self, node: int, term: int) -> None:
        core = self.cluster.core(node)
        if core is not None and core.role is Role.LEADER and core.term == term:
            self._change_membership(node)

    def _network_fault(self, leader: int | None) -> None:
        """A partition (plus one-way cuts) that lasts long enough for elections to happen
        on both sides -- a blip shorter than a lease tests little -- then heals itself."""
        cluster = self.cluster
        rng = cluster.rng
        voters = cluster.voters
        kind = rng.random()
        buffering = rng.random() < 0.3
        if kind < 0.4 and leader is not None:
            # The classic: the leader alone on one side, still taking proposals.
            groups = [[leader], [n for n in voters if n != leader]]
        elif kind < 0.8:
            shuffled = rng.sample(voters, len(voters))
            cut = rng.randrange(1, len(shuffled))
            groups = [shuffled[:cut], shuffled[cut:]]
        else:
            groups = [voters]
        cluster.partition(groups, buffering)
        text = " | ".join(str(g) for g in groups)
        for _ in range(0 if len(groups) == 2 else rng.randint(1, 2)):
            sender, recipient = rng.sample(voters, 2)
            cluster.network.cut_one_way(sender, recipient)
            text += f" cut n{sender}->n{recipient}"
        self._network_generation += 1
        self._network_healed = False
        cluster.log(f"nemesis: {'buffering ' if buffering else ''}partition {text}")
        duration_us = rng.randrange(3, 40) * TICK_US
        cluster.at(cluster.now_us + duration_us, self._heal, self._network_generation)

    def _heal(self, generation: int) -> None:
        if generation == self._network_generation and not self._network_healed:
            self._network_healed = True
            self.cluster.heal()

    # -- recovery -----------------------------------------------------------------------

    def _recover(self) -> None:
        cluster = self.cluster
        cluster.log("recovery: heal, calm network, restart everyone")
        self.recovering = True
        self._network_healed = True
        cluster.heal()
        cluster.network.profile = CALM
        for node in cluster.voters:
            cluster.start(node)
        cluster.at(cluster.now_us + TICK_US, self._recovery_client)

    def _recovery_client(self) -> None:
        """Each tick: propose until an entry commits, then wait for every node to apply it."""
        cluster = self.cluster
        entry = self._liveness_entry
        committed = cluster.checker.committed.get(entry.index) if entry is not None else None
        leader = cluster.leader()
        leader_core = cluster.core(leader) if leader is not None else None
        if self._wiped is not None and leader is not None and leader_core is not None:
            # As an operator would: a voter whose disk was replaced is removed under its
            # old identity (it cannot catch up as that voter), then it catches up as an
            # observer like any other node.
            self._change_membership(leader)
            cluster.at(cluster.now_us + TICK_US, self._recovery_client)
            return
        if entry is not None and committed != entry:
            lost = committed is not None  # another entry committed at its index
            if leader_core is not None and leader_core.raft_log.term(entry.index) != entry.term:
                lost = True  # the current leader does not have it: it may never commit
            if lost:
                entry = None
        if entry is None:
            entry = cluster.propose(leader) if leader is not None else None
            self._liveness_entry = entry
        elif committed == entry and all(
            s.state.index >= entry.index for s in cluster.nodes.values()
        ):
            cluster.done = True
            return
        cluster.at(cluster.now_us + TICK_US, self._recovery_client)

    def _liveness_report(self) -> str:
        cluster = self.cluster
        bound = cluster.params.liveness_bound_ticks
        lines = [f"no leader committed and applied a proposal within {bound} ticks of healing"]
        for node, sim in cluster.nodes.items():
            if sim.core is not None:
                status = sim.core.status()
                lines.append(
                    f"n{node}: {status.role.value} term={status.term} commit="
                    f"{status.commit_index} last={status.last_index} applied={sim.state.index}"
                )
        return "; ".join(lines)
