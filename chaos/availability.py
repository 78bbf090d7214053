"""Availability: how long writes stalled around each fault (a measurement, not a check).

For every fault that was applied, the longest time without an acknowledged write that
overlaps the fault's window, extended after the heal by up to SETTLE_S (or to the next
fault's start), since leaders often move back or catch up only after the heal. A stall that
outlasts the window counts whole, except where the next fault cut the window short: it is
counted up to that fault's start, and the rest is the next fault's.
"""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict
from typing import Any

from rillet.chaos.history import FaultWindow, History

SETTLE_S = 5.0  # how long after a heal the availability window extends (at most)


def availability(history: History) -> list[dict[str, Any]]:
    """Per applied fault: the longest time without any acknowledged write, and without one
    in a single partition (a dead partition leader stalls its partitions only), over the
    fault window extended by up to SETTLE_S after the heal (not past the next fault nor the
    last write)."""
    acks: list[float] = []
    by_partition: dict[int, list[float]] = defaultdict(list)
    for w in history.acknowledged():
        if w.done_t is not None:
            acks.append(w.done_t)
            by_partition[w.partition].append(w.done_t)
    acks.sort()
    for times in by_partition.values():
        times.sort()
    applied = [f for f in history.faults if f.skipped is None]
    out = []
    for i, f in enumerate(applied):
        heal = f.heal_t if f.heal_t is not None else f.start_t
        end = heal + SETTLE_S
        # A stall still going when the window ends is this fault's, to its end — unless the
        # window ends because the next fault begins after this one healed: from there on
        # the stall is the next fault's (a kill costing 0.6 s was charged the 3 s of the
        # partition that followed it).
        past_end = True
        if i + 1 < len(applied) and applied[i + 1].start_t < end:
            end = max(applied[i + 1].start_t, heal)
            past_end = end == heal  # overlapping faults share their stalls
        if acks:
            end = min(end, acks[-1])  # the writers stopped: no gap after the last write
        end = max(end, heal)
        per_partition = {
            p: _longest_gap(ts, f.start_t, end, past_end) for p, ts in by_partition.items()
        }
        worst = max(per_partition, key=lambda p: per_partition[p], default=None)
        out.append(
            {
                "step": f.step,
                "kind": f.kind,
                "node": f.node,
                "start_t": round(f.start_t, 3),
                "heal_t": round(heal, 3),
                "longest_write_gap_s": round(_longest_gap(acks, f.start_t, end, past_end), 3),
                "longest_partition_gap_s": (
                    round(per_partition[worst], 3) if worst is not None else None
                ),
                "partition": worst,
            }
        )
    return out


def _longest_gap(acks: list[float], start: float, end: float, past_end: bool = True) -> float:
    """Longest interval between consecutive (sorted) acks, or the window's edges where none
    lies beyond them, that overlaps [start, end]; cut at ``end`` unless ``past_end``."""
    lo = bisect.bisect_left(acks, start)
    hi = bisect.bisect_right(acks, end)
    before = acks[lo - 1 : lo] if lo > 0 else []
    after = acks[hi : hi + 1] if past_end else []
    edges = (before or [start]) + acks[lo:hi] + (after or [end])
    return max((b - a for a, b in itertools.pairwise(edges)), default=end - start)


def fault_summary(faults: list[FaultWindow]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for f in faults:
        counts[f.kind if f.skipped is None else f"{f.kind} (skipped)"] += 1
    return dict(sorted(counts.items()))
