"""A seeded fault schedule: which fault starts when, against what, and when it is healed.

The schedule is pure data computed from a seed with one ``random.Random(seed)`` and nothing
else (no clock, no global RNG, no cluster state), so the same seed always gives the same
steps and a failing run can be replayed from its seed alone. Targets that only exist at run
time (the Raft leader, the leader of partition 2) are named symbolically here and resolved by
the nemesis when the step starts; node ids, partitions, corruption modes and byte positions
are drawn here.

Budget: each fault kind says how many nodes it makes unavailable. Unless the caller asks
(``allow_majority``), faults never overlap so that more than a minority of the nodes is
unavailable at once, so a majority always stays up to elect leaders and commit, and every
fault is healed after a bounded window, before the run's end.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any

from rillet.chaos.clock_faults import CLOCK_FAULTS, draw_clock_params
from rillet.chaos.multi_kill import MULTI_KILL_FAULTS, draw_multi_kill_params


@dataclass(frozen=True, slots=True)
class FaultKind:
    """One kind of fault the nemesis knows. ``available`` False: named, not built yet."""

    name: str
    nodes_down: int  # nodes it makes unavailable while active (the minority budget)
    available: bool
    description: str


FAULT_KINDS: dict[str, FaultKind] = {
    k.name: k
    for k in (
        FaultKind("kill-leader", 1, True, "SIGKILL the Raft (metadata) leader; restart it"),
        FaultKind(
            "kill-partition-leader", 1, True, "SIGKILL the leader of a partition; restart it"
        ),
        FaultKind("kill-any", 1, True, "SIGKILL a node chosen by the seed; restart it"),
        FaultKind("pause", 1, True, "SIGSTOP a leader or a node, SIGCONT after the window"),
        FaultKind(
            "restart-corrupt-tail",
            1,
            True,
            "SIGKILL a node, tear or flip bytes at the tail of its partition logs, restart it",
        ),
        FaultKind(
            "partition",
            1,
            True,
            "cut the network around a leader or a node: isolate it (majority/minority), "
            "or one way (its messages lost, or messages to it lost); heal after the window",
        ),
        FaultKind(
            "degrade",
            1,
            True,
            "loss and delay on a leader's or a node's link, both ways (tc netem; needs "
            "--network kernel, not in the default set)",
        ),
        FaultKind(
            "reassign",
            0,
            True,
            "move a partition's replicas (a new node in, or one out), then cancel the move "
            "or move it back at the heal (opt-in, not in the default set)",
        ),
        FaultKind(
            "replace-voter",
            1,
            True,
            "SIGKILL a voter (the Raft leader or a node), delete its data directory, remove "
            "its identity; at the heal start it empty and add it back under its new "
            "directory id (opt-in, not in the default set)",
        ),
        # Power and disk faults (chaos/power_faults.py): opt-in by name, never in "all".
        FaultKind(
            "power-cut",
            1,
            True,
            "cut a leader's or a node's power: what it never fsynced is lost; restart it",
        ),
        FaultKind(
            "power-cut-all",
            1,
            True,
            "cut every node's power at once (run it on its own); restart them together",
        ),
        FaultKind("disk-slow", 1, True, "every fsync of a leader or a node takes 1-2 s"),
        FaultKind(
            "disk-eio",
            1,
            True,
            "EIO on reads or writes of one partition's files or of the Raft log of a node",
        ),
        FaultKind(
            "disk-full",
            1,
            True,
            "ENOSPC on writes growing one partition's files or the Raft log of a node",
        ),
        FaultKind(
            "kill-two",
            2,
            True,
            "SIGKILL two nodes (a majority of three); restart both (needs --max-down 2 "
            "--allow-majority; opt-in)",
        ),
        FaultKind(
            "kill-all",
            99,
            True,
            "SIGKILL every node; restart the whole cluster (needs --max-down at least the "
            "node count and --allow-majority; opt-in)",
        ),
        FaultKind(
            "clock-skew",
            1,
            True,
            "set a leader's or a node's wall clock hours ahead or behind, then back "
            "(opt-in: not in the default set)",
        ),
        FaultKind(
            "clock-jump",
            1,
            True,
            "step a leader's or a node's wall clock by seconds to minutes, then back and "
            "forth every period until the heal (opt-in: not in the default set)",
        ),
    )
}
# Kinds only the kernel network mode can apply: left out of the defaults (and of "all"), so
# the default schedules, and the seeds already published, stay as they were.
KERNEL_ONLY_FAULTS = ("degrade",)
# Kinds that need the fault-injecting file layer: opt-in by name, like the kernel-only ones.
DISK_FAULTS = ("power-cut", "power-cut-all", "disk-slow", "disk-eio", "disk-full")
# Kinds added after seeds were published: opt-in by name ("all,reassign"), never in the
# defaults, for the same reason.
OPT_IN_FAULTS = ("reassign", "replace-voter", *DISK_FAULTS, *CLOCK_FAULTS, *MULTI_KILL_FAULTS)
DEFAULT_FAULTS = tuple(
    k.name
    for k in FAULT_KINDS.values()
    if k.available and k.name not in KERNEL_ONLY_FAULTS and k.name not in OPT_IN_FAULTS
)

# Pause and partition targets, drawn per step: a paused or cut-off leader must stop
# acknowledging once it has been replaced.
PAUSE_TARGETS = ("raft-leader", "partition-leader", "node")
CORRUPT_MODES = ("truncate", "flip")
# Whose machine a replace-voter step replaces: the Raft leader's, or a node's.
REPLACE_TARGETS = ("raft-leader", "node")
# Partition modes: "isolate" puts the target alone in the minority (on 3 nodes every
# majority/minority split is this), "split" adds further nodes to its minority while the
# budget allows (5+ nodes), "one-way-out" loses what the target sends, "one-way-in" what it
# is sent.
PARTITION_MODES = ("isolate", "split", "one-way-out", "one-way-in")
# Degraded links: loss (percent) and one-way delay (ms), drawn per step.
DEGRADE_LOSS_PCT = (0.0, 1.0, 5.0, 20.0)
DEGRADE_DELAY_MS = (20, 100, 400)


@dataclass(frozen=True, slots=True)
class Timing:
    """Bounds of the schedule, in seconds from the start of the fault phase."""

    warmup_s: float = 3.0  # no fault before this: the workload gets going first
    cooldown_s: float = 4.0  # every fault is healed this long before the end
    min_window_s: float = 1.5  # how long a fault stays active
    max_window_s: float = 7.0
    min_gap_s: float = 1.5  # between a heal (or a start) and the next start
    max_gap_s: float = 5.0

    def check(self) -> None:
        if not 0 < self.min_window_s <= self.max_window_s:
            raise ValueError("need 0 < min_window_s <= max_window_s")
        if not 0 <= self.min_gap_s <= self.max_gap_s:
            raise ValueError("need 0 <= min_gap_s <= max_gap_s")
        if self.warmup_s < 0 or self.cooldown_s < 0:
            raise ValueError("warmup_s and cooldown_s must be >= 0")


@dataclass(frozen=True, slots=True)
class FaultStep:
    """One fault: started at ``start_s``, healed at ``heal_s`` (seconds into the run).

    ``target`` is "raft-leader", "partition-leader" (of ``partition``), "node" (``node``)
    or "cluster" (a change made through any node: ``reassign`` moves ``partition``).
    ``params`` holds kind-specific draws (corruption mode, bytes, a seed for positions).
    """

    index: int
    kind: str
    start_s: float
    heal_s: float
    target: str
    node: int | None = None
    partition: int | None = None
    params: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        where = {
            "raft-leader": "the Raft leader",
            "partition-leader": f"the leader of partition {self.partition}",
            "node": f"node {self.node}",
            "cluster": f"partition {self.partition}",
        }[self.target]
        extra = "".join(f" {k}={v}" for k, v in sorted(self.params.items()) if k != "seed")
        window = self.heal_s - self.start_s
        return f"{self.kind} {where} at {self.start_s:.1f}s for {window:.1f}s{extra}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Schedule:
    seed: int
    duration_s: float
    nodes: int
    max_down: int
    steps: list[FaultStep]

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "duration_s": self.duration_s,
            "nodes": self.nodes,
            "max_down": self.max_down,
            "steps": [s.to_json() for s in self.steps],
        }


def parse_faults(text: str) -> tuple[str, ...]:
    """ "kill-leader,pause" -> ("kill-leader", "pause"); "all" -> the default kinds (every
    available kind but the kernel-only ones, which can be added: "all,degrade").

    Raises ValueError naming unknown kinds, and kinds that are named but not built yet.
    """
    names: list[str] = []
    for n in (n.strip() for n in text.split(",")):
        names += list(DEFAULT_FAULTS) if n == "all" else [n] if n else []
    if not names:
        raise ValueError("no fault kinds given")
    unknown = [n for n in names if n not in FAULT_KINDS]
    if unknown:
        raise ValueError(f"unknown fault kinds {unknown}; known: {', '.join(FAULT_KINDS)}")
    later = [n for n in names if not FAULT_KINDS[n].available]
    if later:
        raise ValueError(f"fault kinds not yet available: {', '.join(later)}")
    return tuple(dict.fromkeys(names))


def minority(nodes: int) -> int:
    """The most nodes that may be down while a majority stays: 1 of 3, 2 of 5."""
    return (nodes - 1) // 2


def build_schedule(
    seed: int,
    faults: tuple[str, ...],
    duration_s: float,
    nodes: int,
    partitions: int,
    *,
    max_down: int | None = None,
    allow_majority: bool = False,
    timing: Timing | None = None,
) -> Schedule:
    """The steps of one run: faults drawn from ``faults`` until ``duration_s`` is used up.

    ``max_down`` (default: a minority) bounds the nodes unavailable at once; more than a
    minority needs ``allow_majority``. Deterministic in all its arguments.
    """
    timing = timing or Timing()
    timing.check()
    if nodes < 1 or partitions < 1 or duration_s <= 0:
        raise ValueError("nodes, partitions and duration_s must be positive")
    for name in faults:
        kind = FAULT_KINDS.get(name)
        if kind is None or not kind.available:
            raise ValueError(f"fault kind {name!r} is unknown or not yet available")
    limit = minority(nodes) if max_down is None else max_down
    if limit > minority(nodes) and not allow_majority:
        raise ValueError(
            f"max_down {limit} would take a majority of {nodes} nodes down: pass allow_majority"
        )
    limit = max(0, min(limit, nodes))
    rng = random.Random(seed)
    steps: list[FaultStep] = []
    end = duration_s - timing.cooldown_s
    t = timing.warmup_s + rng.uniform(0, timing.min_gap_s)
    # (heal time plus a recovery gap, nodes down): a node counts against the budget until
    # it has had time to catch up after its heal.
    active: list[tuple[float, int]] = []
    while faults and limit > 0:
        kind = FAULT_KINDS[rng.choice(faults)]
        window = rng.uniform(timing.min_window_s, timing.max_window_s)
        active = [(h, n) for h, n in active if h > t]
        down = min(kind.nodes_down, nodes)  # kill-all: every node, however many
        if sum(n for _, n in active) + down > limit:
            if not active:
                break  # this kind alone exceeds the budget
            t = min(h for h, _ in active)  # the earliest heal, plus its recovery gap
            continue
        heal = min(t + window, end)
        if heal - t < timing.min_window_s:
            break
        steps.append(_draw_step(rng, len(steps), kind.name, t, heal, nodes, partitions))
        active.append((heal + rng.uniform(timing.min_gap_s, timing.max_gap_s), down))
        t += rng.uniform(timing.min_gap_s, timing.max_gap_s)
    return Schedule(seed, duration_s, nodes, limit, steps)


def _draw_step(
    rng: random.Random, index: int, kind: str, start: float, heal: float, nodes: int, parts: int
) -> FaultStep:
    """The kind-specific draws of one step (always the same number of draws per kind)."""
    start, heal = round(start, 3), round(heal, 3)
    if kind == "kill-leader":
        return FaultStep(index, kind, start, heal, "raft-leader")
    if kind == "kill-partition-leader":
        return FaultStep(
            index, kind, start, heal, "partition-leader", partition=rng.randrange(parts)
        )
    if kind == "kill-any":
        return FaultStep(index, kind, start, heal, "node", node=rng.randint(1, nodes))
    if kind in MULTI_KILL_FAULTS:
        first = rng.randint(1, nodes)
        return FaultStep(
            index, kind, start, heal, "node", node=first, params=draw_multi_kill_params(rng)
        )
    if kind in ("pause", "partition", "degrade", *CLOCK_FAULTS) or kind in DISK_FAULTS:
        target = rng.choice(PAUSE_TARGETS)
        node = rng.randint(1, nodes)
        partition = rng.randrange(parts)
        params: dict[str, Any] = {}
        if kind == "partition":
            params = _partition_params(rng)
        elif kind == "degrade":
            params = {
                "loss_pct": rng.choice(DEGRADE_LOSS_PCT),
                "delay_ms": rng.choice(DEGRADE_DELAY_MS),
            }
        elif kind in DISK_FAULTS:
            params = _disk_params(rng, kind, parts)
        elif kind in CLOCK_FAULTS:
            params = draw_clock_params(rng, kind)
        return FaultStep(
            index,
            kind,
            start,
            heal,
            target,
            node=node if target == "node" else None,
            partition=partition if target == "partition-leader" else None,
            params=params,
        )
    if kind == "reassign":
        params = {
            "seed": rng.getrandbits(32),  # which replica leaves, which node joins
            "cancel": rng.random() < 0.5,  # at the heal: cancel if still moving, else back
        }
        return FaultStep(
            index, kind, start, heal, "cluster", partition=rng.randrange(parts), params=params
        )
    if kind == "replace-voter":
        target = rng.choice(REPLACE_TARGETS)
        node = rng.randint(1, nodes)
        return FaultStep(index, kind, start, heal, target, node=node if target == "node" else None)
    if kind == "restart-corrupt-tail":
        params = {
            "mode": rng.choice(CORRUPT_MODES),
            "bytes": rng.randint(1, 64),  # torn off, or the window a flipped byte lies in
            "partitions": rng.randint(1, parts),  # how many partition directories to damage
            "seed": rng.getrandbits(32),  # positions, chosen once the file sizes are known
        }
        return FaultStep(
            index, kind, start, heal, "node", node=rng.randint(1, nodes), params=params
        )
    raise ValueError(f"no step drawing for fault kind {kind!r}")


def _disk_params(rng: random.Random, kind: str, parts: int) -> dict[str, Any]:
    """Power and disk faults: how slow, or which files fail how (chaos/power_faults.py)."""
    if kind == "disk-slow":
        return {"slow_fsync_ms": rng.randint(1000, 2000)}
    if kind in ("disk-eio", "disk-full"):
        params: dict[str, Any] = {
            "where": rng.choice(("partition", "raft")),
            "partition": rng.randrange(parts),
        }
        if kind == "disk-eio":
            params["op"] = rng.choice(("read", "write"))
        return params
    return {}


def _partition_params(rng: random.Random) -> dict[str, Any]:
    # The seed picks a split's further minority nodes once the target is known.
    return {"mode": rng.choice(PARTITION_MODES), "seed": rng.getrandbits(32)}
