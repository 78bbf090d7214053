"""The clock row's check: a stepped wall clock must not stall writes.

Safety (nothing acknowledged lost, duplicated or reordered) is checked by checker.py in
every run. What a wrong clock typically breaks is liveness: a timeout measured on the wall
clock fires hours early after a forward step (every broker's lease expires at once) or
hours late after a backward one (a dead broker keeps its lease, a dead follower keeps its
ISR place, and acks=all writes wait on it; if it never comes back, checker.py's
``not-recovered`` says so). So in a run with clock faults, each fault applied from the
first clock fault on — the clock faults and the kills run after them — must let writes
resume, on every partition that kept enough in-sync replicas, within
:data:`STALL_BOUND_S` of its start (availability.py's ``longest_full_isr_gap_s``). A kill
is bounded by the broker session and replica lag timeouts (3 s each in the harness's proxy
mode) plus its recovery, which on a 2-core machine shared with other heavy work took up to
12 s; a clock-skew that puts a partition leader more than ``message.timestamp.after.max.ms``
(1 h) behind stalls it for its window (at most 7 s by default: the timestamp policy
refuses the clients' stamps meanwhile). Faults before the first clock step cannot be the
clock's doing and are not judged here.
"""

from __future__ import annotations

from rillet.chaos.availability import availability
from rillet.chaos.checker import Violation
from rillet.chaos.clock_faults import CLOCK_FAULTS
from rillet.chaos.history import History

STALL_BOUND_S = 20.0


def clock_row_stalls(history: History, bound_s: float = STALL_BOUND_S) -> list[Violation]:
    """Faults of a run with clock faults after which writes stalled over ``bound_s``."""
    rows = availability(history)
    first = min((r["start_t"] for r in rows if r["kind"] in CLOCK_FAULTS), default=None)
    if first is None:
        return []
    out = []
    for row in (r for r in rows if r["start_t"] >= first):
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
