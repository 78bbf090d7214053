"""The nemesis of a run: seeded faults until ``fault_ms``, then healing.

Why a module of its own: which faults strike, whom, for how long, and how the world is made
whole again decides which interleavings a seed explores; it is the part to read (and
change) when a bug needs a fault the sweep does not yet produce. Faults act on the
simulation's network and processes; they draw from the run's random stream, so their order
is part of what a seed reproduces.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .topology import BROKERS, CONSUMER, CONTROLLER, PRODUCER, VOTERS

if TYPE_CHECKING:
    from .broker import SimBroker
    from .simulation import Simulation


class FaultSchedule:
    """Crashes and restarts (the log survives), pauses (SIGSTOP: nothing runs, messages
    queue), network cuts (a broker from everyone, from the quorum, or from the leading voter
    only), stalled
    metadata, controller failover and bursts of message loss; then :meth:`heal`."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim

    def _leader_now(self) -> int | None:
        for b in self.sim.brokers.values():
            if b.up and b.replica is not None and b.replica.is_leader:
                return b.node_id
        return None

    def _target(self) -> SimBroker:
        sim = self.sim
        leader = self._leader_now()
        if leader is not None and sim.rng.random() < 0.6:
            return sim.brokers[leader]
        return sim.brokers[sim.rng.choice(BROKERS)]

    def strike(self) -> None:
        sim = self.sim
        if sim.now >= sim.config.fault_ms:
            return
        lo, hi = sim.config.nemesis_every_ms
        sim.at(sim.now + sim.rng.randint(lo, hi), self.strike)
        b = self._target()
        action = sim.rng.choices(
            [
                "crash",
                "pause",
                "isolate",
                "cut_controller",
                "stall_metadata",
                "failover",
                "loss_burst",
            ],
            weights=[4, 3, 2, 2, 2, 1, 1],
        )[0]
        duration = sim.rng.randint(50, 900)
        sim.trace_line(f"nemesis: {action} {b} for {duration}ms")
        sim.stats[f"nemesis {action}"] += 1
        if action == "crash" and b.up:
            self.crash(b)
            sim.at(sim.now + duration, self.restart, b)
        elif action == "pause" and b.up and not b.paused:
            b.paused = True
            sim.at(sim.now + duration, self.resume, b)
        elif action == "isolate":
            links = {(b.node_id, o) for o in (*BROKERS, CONTROLLER, *VOTERS, PRODUCER, CONSUMER)}
            links |= {(o, d) for d, o in links}
            self._cut_for(links, duration)
        elif action == "cut_controller":
            # From the quorum (the leading voter and the metadata log too), or from the
            # leading voter only: its calls time out there and go to another voter, which
            # names the leader again.
            leader = sim.controller.cluster.leader_id
            others = [CONTROLLER, *VOTERS]
            if leader is not None and sim.rng.random() < 0.5:
                others = [leader]
            links = {(b.node_id, o) for o in others}
            self._cut_for(links | {(o, d) for d, o in links}, duration)
        elif action == "stall_metadata":
            b.metadata_stalled_until = max(b.metadata_stalled_until, sim.now + duration)
        elif action == "failover" and sim.controller.ctl is not None:
            sim.controller.failover(sim.rng.randint(10, 200))
        elif action == "loss_burst":
            sim.loss = 0.3
            sim.at(sim.now + duration, self._end_loss_burst)

    def _end_loss_burst(self) -> None:
        if not self.sim.healed:
            self.sim.loss = self.sim.config.loss

    def _cut_for(self, links: set[tuple[int, int]], duration: int) -> None:
        sim = self.sim
        fresh = links - sim.cut
        sim.cut |= fresh
        sim.at(sim.now + duration, self._heal_links, fresh)

    def _heal_links(self, links: set[tuple[int, int]]) -> None:
        self.sim.cut -= links

    def crash(self, b: SimBroker) -> None:
        sim = self.sim
        b.crash()
        sim.trace_line(f"{b} crashed at log end {b.log.log_end_offset}")
        # The kernel closes its sockets: its leader and the controller usually notice.
        for other in sim.brokers.values():
            leader = other.replica.leader if other.replica is not None else None
            if other.up and not other.paused and leader is not None and sim.rng.random() < 0.7:
                leader.follower_disconnected(
                    b.node_id, sim.now, sim.config.lag_max_ms, sim.config.disconnect_grace_ms
                )
        if sim.rng.random() < 0.7:
            sim.controller.connection_lost(b.node_id)

    def restart(self, b: SimBroker) -> None:
        if not b.up:
            self.sim.trace_line(f"{b} restarts")
            b.start()

    def resume(self, b: SimBroker) -> None:
        sim = self.sim
        if b.up and b.paused:
            b.paused = False
            deferred, b.deferred = b.deferred, []
            for fn, args in deferred:
                sim.at(sim.now, sim.run_on_broker, b, b.incarnation, fn, args)

    def heal(self) -> None:
        """End of the fault phase: everything up, connected, and the network reliable."""
        sim = self.sim
        sim.healed = True
        sim.loss = 0.0
        sim.duplication = 0.0
        sim.cut.clear()
        for b in sim.brokers.values():
            b.metadata_stalled_until = 0
            if not b.up:
                self.restart(b)
            elif b.paused:
                self.resume(b)
        if sim.controller.cluster.leader_id is None:
            sim.controller._elected(VOTERS[0])
        sim.trace_line("healed")
