"""The clock row's check: a stepped wall clock must not stall writes.

Safety (nothing acknowledged lost, duplicated or reordered) is checked by checker.py in
every run. What a wrong clock typically breaks is liveness: a timeout measured on the wall
clock fires hours early after a forward step (every broker's lease expires at once) or
hours late after a backward one (a dead broker keeps its lease, a dead follower keeps its
ISR place, and acks=all writes wait on it). So in a run with clock faults, each applied
fault — the clock faults and the kills and pauses run beside them — must let writes resume
on every partition that kept enough in-sync replicas within :data:`STALL_BOUND_S` of its
start (availability.py's ``longest_full_isr_gap_s``): a kill is bounded by the broker
session and replica lag timeouts (3 s each in the harness's proxy mode), a clock-skew that
puts a partition leader more than ``message.timestamp.after.max.ms`` (1 h) behind by its
window (at most 7 s by default: the timestamp policy refuses the clients' stamps meanwhile),
and neither comes near the bound; a lag or lease on the wall clock stalls for the whole
window of the next kill after a step, and more.
"""

from __future__ import annotations

from rillet.chaos.availability import availability
from rillet.chaos.checker import Violation
from rillet.chaos.clock_faults import CLOCK_FAULTS
from rillet.chaos.history import History

STALL_BOUND_S = 10.0


def clock_row_stalls(history: History, bound_s: float = STALL_BOUND_S) -> list[Violation]:
    """Faults of a run with clock faults after which writes stalled over ``bound_s``."""
    rows = availability(history)
    if not any(r["kind"] in CLOCK_FAULTS for r in rows):
        return []
    out = []
    for row in rows:
        gap = row.get("longest_full_isr_gap_s")
        if gap is not None and gap > bound_s:
            out.append(
                Violation(
                    "clock-stall",
                    f"fault {row['step']} ({row['kind']} on node {row['node']}): partition "
                    f"writes stalled {gap:.1f} s, over {bound_s:g} s, in a run with clock "
                    "faults",
                    {"step": row["step"], "kind": row["kind"], "gap_s": gap},
                )
            )
    return out
