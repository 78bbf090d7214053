"""The clock faults: a node's wall clock hours off (``clock-skew``) or stepping back and
forth (``clock-jump``), while the machine's clock and the other nodes keep the true time.

Each node of a run with a clock fault runs under the test-only shim (``chaos/clock_shim.py``),
reading its wall clock as the true time plus the offset in its clock file; the injectors
here write that file. ``clock-skew`` sets the node hours ahead or behind for the window, then
steps it back to the true time (so a run sees both a forward and a backward step);
``clock-jump`` makes the clock step by minutes at once and then, every ``period_ms``, step a
further ``flip_ms`` and back until the heal. Monotonic clocks are not touched, as a stepped
system clock does not touch them: a node that times its leases, sessions and lags on them
(broker.clock ``steady_ms``) must not notice.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rillet.chaos.clock_shim import wrap_with, write_clock

if TYPE_CHECKING:
    from rillet.chaos.nemesis import Active, Nemesis
    from rillet.chaos.schedule import FaultStep

CLOCK_FAULTS = ("clock-skew", "clock-jump")
# clock-skew: whole hours ahead (+) or behind (-); clock-jump: a first step of seconds to
# minutes, then a further step back and forth every period.
SKEW_HOURS = (1, 2, 3, 6, 12)
JUMP_S = (5, 30, 120, 600)
JUMP_PERIOD_MS = (300, 1000, 2500)


def clock_file(cluster_dir: Path, node_id: int) -> Path:
    """Where node ``node_id`` of the cluster planned in ``cluster_dir`` reads its offset."""
    return cluster_dir / f"clock-node-{node_id}.json"


def clock_wrap(cluster_dir: Path) -> Any:
    """A node argv wrap: the node (``python -m rillet.cli.main ...`` or a test entry script)
    runs under the clock shim, its offset file created at zero."""

    def wrap(node_id: int, argv: list[str]) -> list[str]:
        path = clock_file(cluster_dir, node_id)
        if not path.exists():
            write_clock(path, 0)
        return [*wrap_with(path), *argv[1:]]  # argv[0] is the interpreter

    return wrap


def draw_clock_params(rng: random.Random, kind: str) -> dict[str, Any]:
    """The kind's draws (always the same number per kind: schedules stay reproducible)."""
    sign = rng.choice((1, -1))
    if kind == "clock-skew":
        return {"offset_ms": sign * rng.choice(SKEW_HOURS) * 3_600_000}
    first = sign * rng.choice(JUMP_S) * 1000
    flip = rng.choice((1, -1)) * rng.choice(JUMP_S) * 1000
    return {"offset_ms": first, "flip_ms": flip, "period_ms": rng.choice(JUMP_PERIOD_MS)}


class ClockFault:
    """Write the node's clock file for the window; heal: back to the true time."""

    def apply(self, nemesis: Nemesis, step: FaultStep, node: int) -> dict[str, Any]:
        path = self._path(nemesis, node)
        offset = int(step.params["offset_ms"])
        flip, period = int(step.params.get("flip_ms", 0)), int(step.params.get("period_ms", 0))
        write_clock(path, offset, flip, period)
        return {"offset_ms": offset, "flip_ms": flip, "period_ms": period}

    def heal(self, nemesis: Nemesis, active: Active) -> dict[str, Any]:
        write_clock(self._path(nemesis, active.node), 0)
        return {}

    @staticmethod
    def _path(nemesis: Nemesis, node: int) -> Path:
        return clock_file(Path(nemesis.cluster.plan.base_dir), node)
