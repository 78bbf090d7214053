"""Kills of several nodes at once: ``kill-two`` (a majority of three: no quorum, no
leaders, until one comes back) and ``kill-all`` (every node, then a whole-cluster restart).

Both take more than a minority down, so a schedule draws them only with ``--max-down`` and
``--allow-majority`` (the budget would refuse them otherwise). The nodes killed besides the
drawn one are chosen when the step starts, from the nodes then up, by the step's own seed;
they are recorded as the fault's ``minority`` (the nodes it makes unavailable), so the
budget, the availability report and the heal all see them. The heal restarts them all at
once, then waits for each (a whole-cluster restart is the point of ``kill-all``).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from rillet.launcher.local_node import NodeStartError

if TYPE_CHECKING:
    from rillet.chaos.nemesis import Active, Nemesis
    from rillet.chaos.schedule import FaultStep

MULTI_KILL_FAULTS = {"kill-two": 2, "kill-all": 0}  # how many nodes (0: every node)


def draw_multi_kill_params(rng: random.Random) -> dict[str, Any]:
    return {"seed": rng.getrandbits(32)}


class MultiKill:
    """SIGKILL the target and further nodes; restart them all at the heal."""

    def apply(self, nemesis: Nemesis, step: FaultStep, node: int) -> dict[str, Any]:
        count = MULTI_KILL_FAULTS[step.kind] or len(nemesis.node_ids)
        others = [i for i in nemesis.up() if i != node]
        random.Random(int(step.params["seed"])).shuffle(others)
        killed = [node, *others[: count - 1]]
        for i in killed:
            nemesis.cluster.kill(i)
        return {"minority": killed}

    def heal(self, nemesis: Nemesis, active: Active) -> dict[str, Any]:
        killed = [int(i) for i in active.detail.get("minority", [active.node])]
        try:
            for i in killed:
                if not nemesis.cluster.alive(i):
                    nemesis.cluster.spawn(i)
            nemesis.cluster.wait_ready(killed, nemesis.restart_timeout_s)
        except NodeStartError as exc:
            for i in killed:
                if not nemesis.cluster.alive(i):
                    nemesis.restart(i)  # records the crash if it cannot start again
            return {"restart_error": str(exc)[-500:]}
        return {}
