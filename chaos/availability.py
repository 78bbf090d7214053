"""Availability: how long writes stalled around each fault (a measurement, not a check).

Measured twice from the acknowledged writes: per partition of the workload topic, and
cluster-wide. Most faults stall only some partitions (a killed, paused or cut-off partition
leader stalls the partitions it leads while the others keep writing), so the cluster-wide
figure — no acknowledged write on *any* partition — hides them; the figure that says what a
client of the unlucky partition saw is the worst partition's gap, reported with which
partition it was. Every partition of the topic is measured, also one that acknowledged
nothing at all during the run (its whole window is one gap).

Each applied fault is charged the longest time without an acknowledged write *from its
start* until writes resumed, for stalls that begin or last within the fault's window (the
fault itself and up to SETTLE_S after its heal, since leaders often move back or catch up
only after the heal). A stall can outlast that window, but is charged only until the next
fault starts when that fault begins after this one healed: from there on it is the next
fault's. So consecutive faults split one long stall between them instead of both counting
all of it; faults that overlap each count it from their own start.

A partition whose in-sync replicas just before the fault, less the nodes the fault takes
away, number fewer than ``min.insync.replicas`` cannot acknowledge acks=all writes until a
replica rejoins (typically one still catching up after an earlier fault): that wait is the
guarantee at work, not a stall of the failover. Such partitions are listed per fault
(``short_isr_partitions``, from the ISR the harness records as each fault starts), and the
worst gap among the other partitions is reported beside the overall worst
(``longest_full_isr_gap_s``): the figure a failover bound applies to.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import defaultdict
from typing import Any

from rillet.chaos.history import FaultWindow, History

SETTLE_S = 5.0  # how long after a heal the availability window extends (at most)


def availability(history: History) -> list[dict[str, Any]]:
    """Per applied fault: the longest stall charged to it (module docstring) in each
    partition (``partition_gaps_s``), the worst of them (``longest_partition_gap_s`` and
    its ``partition``), and in any acknowledged write (``longest_write_gap_s``)."""
    acks: list[float] = []
    by_partition: dict[int, list[float]] = defaultdict(list)
    for p in range(int(history.meta.get("config", {}).get("partitions", 0))):
        by_partition[p] = []  # a partition that never acknowledged is measured too
    for w in history.acknowledged():
        if w.done_t is not None:
            acks.append(w.done_t)
            by_partition[w.partition].append(w.done_t)
    acks.sort()
    for times in by_partition.values():
        times.sort()
    applied = [f for f in history.faults if f.skipped is None]
    config = history.meta.get("config", {})
    # The topic's min.insync.replicas (the runner caps it at the replication factor).
    min_insync = min(int(config.get("min_insync", 1)), int(config.get("replication_factor", 1)))
    out = []
    for i, f in enumerate(applied):
        heal = f.heal_t if f.heal_t is not None else f.start_t
        end = heal + SETTLE_S
        # Where a stall stops being this fault's: the start of a next fault that begins
        # after this one healed (seed 6 charged a 0.59 s kill the 3.1 s partition after it).
        charged_until = math.inf
        if i + 1 < len(applied):
            next_start = applied[i + 1].start_t
            end = min(end, next_start)
            if next_start >= heal:
                charged_until = next_start
        if acks:
            end = min(end, acks[-1])  # the writers stopped: no gap after the last write
        end = max(end, heal)
        per_partition = {
            p: _longest_gap(ts, f.start_t, end, charged_until) for p, ts in by_partition.items()
        }
        # The worst partition; ties go to the lowest partition number (a stable answer).
        worst = max(sorted(per_partition), key=lambda p: per_partition[p], default=None)
        short = _short_isr_partitions(f, min_insync)
        full_isr_gaps = [
            g for p, g in per_partition.items() if short is not None and p not in short
        ]
        out.append(
            {
                "step": f.step,
                "kind": f.kind,
                "node": f.node,
                "start_t": round(f.start_t, 3),
                "heal_t": round(heal, 3),
                "longest_partition_gap_s": (
                    round(per_partition[worst], 3) if worst is not None else None
                ),
                "partition": worst,
                "partition_gaps_s": {str(p): round(g, 3) for p, g in sorted(per_partition.items())},
                "longest_write_gap_s": round(_longest_gap(acks, f.start_t, end, charged_until), 3),
                "short_isr_partitions": short,
                "controller_hit": _controller_hit(f),
                "longest_full_isr_gap_s": (round(max(full_isr_gaps), 3) if full_isr_gaps else None),
            }
        )
    return out


def _controller_hit(f: FaultWindow) -> bool | None:
    """Whether the fault took away the Raft leader (the controller) too, by the leader
    recorded as it started (None: not recorded). Such a fault's stall includes electing a
    new Raft leader before any partition can move."""
    leader = f.detail.get("raft_leader_before")
    if not isinstance(leader, int):
        return None
    return leader == f.node or leader in {int(i) for i in f.detail.get("minority", ())}


def _short_isr_partitions(f: FaultWindow, min_insync: int) -> list[int] | None:
    """Partitions the fault left with fewer than ``min_insync`` in-sync replicas (by the ISR
    recorded as it started); None when no ISR was recorded."""
    isr_before = f.detail.get("isr_before")
    if not isinstance(isr_before, dict):
        return None
    gone = {f.node, *(int(i) for i in f.detail.get("minority", ()))}
    return sorted(
        int(p) for p, replicas in isr_before.items() if len(set(replicas) - gone) < min_insync
    )


def _longest_gap(acks: list[float], start: float, end: float, charged_until: float) -> float:
    """The longest interval between consecutive (sorted) acks — or the window's edges where
    no ack lies beyond them — that overlaps [start, end], counted from ``start`` at the
    earliest and up to ``charged_until`` at the latest."""
    lo = bisect.bisect_left(acks, start)
    hi = bisect.bisect_right(acks, end)
    before = acks[lo - 1 : lo] if lo > 0 else []
    after = acks[hi : hi + 1]
    edges = (before or [start]) + acks[lo:hi] + (after or [end])
    return max(
        (min(b, charged_until) - max(a, start) for a, b in itertools.pairwise(edges)),
        default=end - start,
    )


def fault_summary(faults: list[FaultWindow]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for f in faults:
        counts[f.kind if f.skipped is None else f"{f.kind} (skipped)"] += 1
    return dict(sorted(counts.items()))
