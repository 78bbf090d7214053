"""The nemesis: carries out the schedule's fault steps on a LocalCluster, and heals them.

A step names its target symbolically; ``start`` resolves it against the live cluster (the
Raft leader from DescribeQuorum, a partition leader from DescribeTopics), refuses it when it
would take more than ``max_down`` nodes down or hit a node that is already down (recorded as
``skip`` with the reason, so the history says what really happened), applies it and records
the fault window. Each fault kind is one ``Injector`` with ``apply`` and ``heal``; a network
partition cuts links of the per-link proxies (``chaos/link_proxy.py``) every node talks to
the others through, or, in the kernel network mode (``chaos/kernel_network.py``), takes the
network links of its minority's nodes down; ``degrade`` puts loss and delay on a node's link
(kernel mode, and only where the kernel has netem: otherwise the step is skipped, saying so).

The nemesis also watches for nodes that exit on their own (``check_crashes``): such an exit
is recorded as a crash, which the checker reports, and the node is started again so the run
can go on. ``heal_all`` is idempotent and safe to call from ``finally``.
"""

from __future__ import annotations

import logging
import random
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from rillet.chaos import probes
from rillet.chaos.clock_faults import CLOCK_FAULTS, ClockFault
from rillet.chaos.disk import corrupt_tails
from rillet.chaos.errors import ChaosError
from rillet.chaos.history import HistoryWriter
from rillet.chaos.kernel_network import KernelNetwork
from rillet.chaos.link_proxy import LinkProxies
from rillet.chaos.multi_kill import MULTI_KILL_FAULTS, MultiKill
from rillet.chaos.power_faults import INJECTORS as POWER_INJECTORS
from rillet.chaos.power_faults import stopped_by_disk_fault
from rillet.chaos.reassign_fault import end_move, start_move
from rillet.chaos.replace_voter import ReplaceVoter
from rillet.chaos.schedule import FAULT_KINDS, FaultStep
from rillet.launcher.local_cluster import LocalCluster
from rillet.launcher.local_node import NodeStartError

log = logging.getLogger(__name__)
RESTART_TIMEOUT_S = 45.0
MAX_CRASH_RESTARTS = 3  # a node that keeps dying is left down (each death is a violation)


@dataclass(slots=True)
class Active:
    """A fault in force: what it did to which node, until healed."""

    step: FaultStep
    node: int
    detail: dict[str, Any] = field(default_factory=dict)


class Injector(Protocol):
    def apply(self, nemesis: Nemesis, step: FaultStep, node: int) -> dict[str, Any]: ...

    def heal(self, nemesis: Nemesis, active: Active) -> dict[str, Any]: ...


class Kill:
    """SIGKILL: no controlled shutdown, the node recovers from its files on restart."""

    def apply(self, nemesis: Nemesis, step: FaultStep, node: int) -> dict[str, Any]:
        nemesis.cluster.kill(node)
        return {}

    def heal(self, nemesis: Nemesis, active: Active) -> dict[str, Any]:
        return nemesis.restart(active.node)


class Pause:
    """SIGSTOP: the process keeps its sockets but answers nothing until SIGCONT."""

    def apply(self, nemesis: Nemesis, step: FaultStep, node: int) -> dict[str, Any]:
        nemesis.cluster.signal(node, signal.SIGSTOP)
        return {}

    def heal(self, nemesis: Nemesis, active: Active) -> dict[str, Any]:
        nemesis.cluster.signal(active.node, signal.SIGCONT)
        return {}


class CorruptTail(Kill):
    """SIGKILL, then tear or flip bytes at the end of the node's partition logs."""

    def apply(self, nemesis: Nemesis, step: FaultStep, node: int) -> dict[str, Any]:
        nemesis.cluster.kill(node)
        damage = corrupt_tails(
            nemesis.cluster.plan.node(node).work_dir,
            nemesis.topic,
            nemesis.partitions,
            mode=str(step.params["mode"]),
            nbytes=int(step.params["bytes"]),
            count=int(step.params["partitions"]),
            seed=int(step.params["seed"]),
        )
        return {"damage": damage}


class Partition:
    """Cut links around the target: both ways (isolate / split) or one way."""

    def apply(self, nemesis: Nemesis, step: FaultStep, node: int) -> dict[str, Any]:
        mode = str(step.params["mode"])
        others = [i for i in nemesis.node_ids if i != node]
        minority = [node]
        if mode == "split":
            spare = nemesis.max_down - len(nemesis.down() | {node})
            extra = random.Random(int(step.params["seed"])).sample(others, k=len(others))
            minority += [i for i in extra if i not in nemesis.down()][: max(0, spare)]
        rest = [i for i in nemesis.node_ids if i not in minority]
        if mode == "one-way-out":
            pairs = {(node, b) for b in rest}
        elif mode == "one-way-in":
            pairs = {(b, node) for b in rest}
        else:
            pairs = {(a, b) for a in minority for b in rest} | {
                (b, a) for a in minority for b in rest
            }
        if nemesis.kernel is not None:
            # A link is cut whole: every mode takes the minority's links down (one-way
            # modes become both ways; a split's minority nodes lose each other too).
            for i in minority:
                nemesis.kernel.link_down(i)
            return {"mode": mode, "minority": minority, "links_down": minority}
        nemesis.cut_links(pairs)
        return {"mode": mode, "minority": minority, "cut": sorted(pairs)}

    def heal(self, nemesis: Nemesis, active: Active) -> dict[str, Any]:
        if "links_down" in active.detail:
            assert nemesis.kernel is not None  # only the kernel mode records links_down
            for i in active.detail["links_down"]:
                nemesis.kernel.link_up(int(i))
            return {}
        nemesis.restore_links([tuple(p) for p in active.detail["cut"]])
        return {}


class Degrade:
    """Loss and delay on the target's link, both ways (netem; kernel network mode)."""

    def apply(self, nemesis: Nemesis, step: FaultStep, node: int) -> dict[str, Any]:
        assert nemesis.kernel is not None  # Nemesis.start skips degrade without it
        loss, delay = float(step.params["loss_pct"]), int(step.params["delay_ms"])
        nemesis.kernel.degrade(node, loss, delay)
        return {"loss_pct": loss, "delay_ms": delay}

    def heal(self, nemesis: Nemesis, active: Active) -> dict[str, Any]:
        if nemesis.kernel is not None:
            nemesis.kernel.restore(active.node)
        return {}


class Reassign:
    """A partition move during the faults (chaos/reassign_fault.py); takes no node down."""

    def apply(self, nemesis: Nemesis, step: FaultStep, node: int) -> dict[str, Any]:
        bootstrap = probes.bootstrap_of(nemesis.cluster, nemesis.up())
        partition = step.partition if step.partition is not None else 0
        seed = int(step.params["seed"])
        detail: dict[str, Any] = start_move(
            bootstrap, nemesis.topic, partition, nemesis.node_ids, seed
        )
        return detail

    def heal(self, nemesis: Nemesis, active: Active) -> dict[str, Any]:
        bootstrap = probes.bootstrap_of(nemesis.cluster, nemesis.up())
        cancel = bool(active.step.params["cancel"])
        detail: dict[str, Any] = end_move(bootstrap, nemesis.topic, active.detail, cancel)
        return detail


INJECTORS: dict[str, Injector] = {
    "reassign": Reassign(),
    "replace-voter": ReplaceVoter(),
    "partition": Partition(),
    "kill-leader": Kill(),
    "kill-partition-leader": Kill(),
    "kill-any": Kill(),
    "pause": Pause(),
    "restart-corrupt-tail": CorruptTail(),
    "degrade": Degrade(),
    **POWER_INJECTORS,
    **{kind: ClockFault() for kind in CLOCK_FAULTS},
    **{kind: MultiKill() for kind in MULTI_KILL_FAULTS},
}


class Nemesis:
    def __init__(
        self,
        cluster: LocalCluster,
        topic: str,
        partitions: int,
        history: HistoryWriter,
        max_down: int,
        restart_timeout_s: float = RESTART_TIMEOUT_S,
        links: LinkProxies | None = None,
        kernel: KernelNetwork | None = None,
        isr_probe: Callable[[Nemesis], dict[int, list[int]] | None] | None = None,
        raft_leader_probe: Callable[[Nemesis], int | None] | None = None,
    ) -> None:
        self.cluster = cluster
        self.isr_probe = isr_probe if isr_probe is not None else _probe_isr
        self.raft_leader_probe = (
            raft_leader_probe if raft_leader_probe is not None else _probe_raft_leader
        )
        self.topic = topic
        self.partitions = partitions
        self.history = history
        self.max_down = max_down
        self.restart_timeout_s = restart_timeout_s
        self.active: dict[int, Active] = {}  # step index -> fault in force
        self.crashes: dict[int, int] = {}  # node -> times it exited on its own
        self.links = links
        self.kernel = kernel
        self._cuts: list[set[tuple[int, int]]] = []  # the links each partition in force cut

    @property
    def node_ids(self) -> list[int]:
        return [n.node_id for n in self.cluster.plan.nodes]

    def down(self) -> set[int]:
        """Nodes a fault in force makes unavailable (a split's whole minority)."""
        out = {a.node for a in self.active.values() if _takes_down(a.step)}
        for a in self.active.values():
            out.update(int(i) for i in a.detail.get("minority", ()))
        return out

    def up(self) -> list[int]:
        down = self.down()
        return [i for i in self.node_ids if i not in down and self.cluster.alive(i)]

    # -- faults ---------------------------------------------------------------------------

    def start(self, step: FaultStep) -> bool:
        """Apply a step now (True), or record why it was skipped (False)."""
        injector = INJECTORS.get(step.kind)
        node, reason = self._resolve(step)
        if injector is None:
            reason = f"fault kind {step.kind} has no injector"
        elif node is not None and _takes_down(step) and len(self.down() | {node}) > self.max_down:
            reason = f"node {node} would exceed the budget of {self.max_down} down"
        if step.kind == "degrade" and node is not None and not reason:
            reason = self._degrade_unavailable()
        if injector is None or node is None or reason:
            self._record(step, "skip", node, {}, reason=reason or "no target")
            return False
        # The ISR just before the fault: a partition left with fewer than min.insync.replicas
        # in-sync replicas once the target is gone waits for acks=all writes until one
        # rejoins, which is the guarantee, not a stall (availability.py tells them apart).
        isr = self.isr_probe(self)
        raft_leader = self.raft_leader_probe(self)
        detail = injector.apply(self, step, node)
        if isr is not None:
            detail["isr_before"] = {str(p): replicas for p, replicas in sorted(isr.items())}
        if raft_leader is not None:
            # Whether the fault also hit the controller: its successor is elected first.
            detail["raft_leader_before"] = raft_leader
        self.active[step.index] = Active(step, node, detail)
        self._record(step, "start", node, {"target": step.target, **detail})
        log.info("fault %d: %s -> node %d", step.index, step.describe(), node)
        return True

    def _degrade_unavailable(self) -> str | None:
        if self.kernel is None:
            return "degrade needs the kernel network mode"
        return self.kernel.netem_missing

    def heal(self, step: FaultStep) -> None:
        active = self.active.pop(step.index, None)
        if active is None:
            return
        detail = INJECTORS[step.kind].heal(self, active)
        self._record(step, "heal", active.node, detail)

    def heal_all(self) -> None:
        """Heal every fault in force, in the order they started."""
        for index in sorted(self.active):
            self.heal(self.active[index].step)

    def _resolve(self, step: FaultStep) -> tuple[int | None, str | None]:
        up = self.up()
        if step.target == "node":
            node = step.node
            if node is None or node not in self.node_ids:
                return None, f"no node {node}"
            return (node, None) if node in up else (None, f"node {node} is already down")
        if step.target == "cluster":  # the whole cluster, through any node that is up
            return (up[0], None) if up else (None, "no node is up")
        if step.target == "raft-leader":
            leader = probes.raft_leader(self.cluster, up)
            return (leader, None) if leader is not None else (None, "no live Raft leader")
        if step.target == "partition-leader" and step.partition is not None:
            leader = probes.partition_leader(
                probes.bootstrap_of(self.cluster, up), self.topic, step.partition
            )
            if leader is None or leader not in up:
                return None, f"partition {step.partition} has no live leader"
            return leader, None
        return None, f"unknown target {step.target}"

    def _record(
        self, step: FaultStep, phase: str, node: int | None, detail: dict[str, Any], **extra: Any
    ) -> None:
        self.history.write(
            {
                "type": "fault",
                "phase": phase,
                "step": step.index,
                "kind": step.kind,
                "node": node,
                "detail": detail,
                **extra,
            }
        )

    # -- links ----------------------------------------------------------------------------

    def cut_links(self, pairs: set[tuple[int, int]]) -> None:
        if self.links is None:
            raise ChaosError("network partitions need the cluster's link proxies")
        self._cuts.append(pairs)
        self.links.cut(pairs)

    def restore_links(self, pairs: list[tuple[int, int]]) -> None:
        """Heal one partition's links, keeping those another partition in force also cut."""
        if self.links is None:
            return
        self._cuts = [c for c in self._cuts if c != set(pairs)]
        still = set().union(*self._cuts) if self._cuts else set()
        self.links.heal([p for p in pairs if p not in still])

    # -- processes ------------------------------------------------------------------------

    def restart(self, node: int) -> dict[str, Any]:
        """Start a stopped node and wait (bounded) until it serves."""
        if self.cluster.alive(node):
            return {}
        try:
            self.cluster.spawn(node)
            self.cluster.wait_ready([node], self.restart_timeout_s)
        except NodeStartError as exc:
            if not self.cluster.alive(node):
                self._crash(node, str(exc))
            return {"restart_error": str(exc)[-500:]}
        return {}

    def check_crashes(self) -> list[int]:
        """Record and restart nodes that exited while no fault of ours had stopped them."""
        down = self.down() | self.given_up()
        gone = [i for i in self.node_ids if i not in down and not self.cluster.alive(i)]
        for node in gone:
            self._crash(node, self.cluster.log_tail(node, 40))
            if node not in self.given_up():
                self.restart(node)
        return gone

    def given_up(self) -> set[int]:
        return {n for n, count in self.crashes.items() if count >= MAX_CRASH_RESTARTS}

    def _crash(self, node: int, tail: str) -> None:
        status = self.cluster.stop(node)  # reaps the exited process: its exit status
        if stopped_by_disk_fault(status, tail):
            # It stopped on an injected disk error, as it must, only after the fault's heal.
            log.info("node %d stopped on an injected disk error (status %s)", node, status)
            self.history.write({"type": "disk-stop", "node": node, "status": status})
            return
        self.crashes[node] = self.crashes.get(node, 0) + 1
        log.error("node %d exited on its own (status %s)", node, status)
        self.history.write({"type": "crash", "node": node, "status": status, "log_tail": tail})


def _takes_down(step: FaultStep) -> bool:
    kind = FAULT_KINDS.get(step.kind)
    return kind is None or kind.nodes_down > 0


def _probe_isr(nemesis: Nemesis) -> dict[int, list[int]] | None:
    """Each partition's ISR, asked of the nodes that are up (None: no answer)."""
    return probes.partition_isrs(probes.bootstrap_of(nemesis.cluster, nemesis.up()), nemesis.topic)


def _probe_raft_leader(nemesis: Nemesis) -> int | None:
    """The Raft leader (the active controller) among the nodes that are up, if known."""
    return probes.raft_leader(nemesis.cluster, nemesis.up())
