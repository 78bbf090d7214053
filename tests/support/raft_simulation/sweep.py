"""Running seeds: one at a time with a replayable failure, or a sweep over a range.

A failure carries the seed, what broke, the tail of the event trace and the exact command
that replays the run (the run is a pure function of seed and parameters).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from raft_simulation.cluster import RunStats, SimCluster, SimulationParams
from raft_simulation.mutants import CoreFault
from raft_simulation.scenario import Scenario


class SimulationFailure(AssertionError):
    def __init__(self, seed: int, reason: str, replay: str, trace_tail: list[str]) -> None:
        super().__init__(f"seed {seed} failed: {reason}\n  replay: {replay}")
        self.seed = seed
        self.reason = reason
        self.replay = replay
        self.trace_tail = trace_tail

    def __reduce__(self) -> tuple[type[SimulationFailure], tuple[int, str, str, list[str]]]:
        """Sweeps with --workers pass failures between processes."""
        return (SimulationFailure, (self.seed, self.reason, self.replay, self.trace_tail))


def replay_command(seed: int, params: SimulationParams) -> str:
    parts = ["python -m raft_simulation", f"--start {seed} --seeds 1"]
    if params.nodes is not None:
        parts.append(f"--nodes {params.nodes}")
    if params.chaos_ticks != SimulationParams().chaos_ticks:
        parts.append(f"--chaos-ticks {params.chaos_ticks}")
    if params.fault is not CoreFault.NONE:
        parts.append(f"--fault {params.fault.value}")
    if not params.torn_writes:
        parts.append("--no-torn-writes")
    if params.lose_all_unsynced:
        parts.append("--lose-all-unsynced")
    if params.membership:
        parts.append("--membership")
    if params.crash_all is not None:
        parts.append("--crash-all" if params.crash_all else "--no-crash-all")
    parts.append("--trace")
    return " ".join(parts)


def run_seed(seed: int, params: SimulationParams) -> RunStats:
    """Run one seed; raises SimulationFailure on any violation, invariant or crash."""
    cluster = SimCluster(seed, params)
    try:
        return Scenario(cluster).run()
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        raise SimulationFailure(
            seed, reason, replay_command(seed, params), list(cluster.trace)
        ) from exc


def replay(seed: int, params: SimulationParams) -> tuple[list[str], RunStats | SimulationFailure]:
    """Run one seed and return its whole event trace with the outcome."""
    traced = dataclasses.replace(params, trace=True)
    cluster = SimCluster(seed, traced)
    try:
        outcome: RunStats | SimulationFailure = Scenario(cluster).run()
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        outcome = SimulationFailure(seed, reason, replay_command(seed, params), [])
    return list(cluster.trace), outcome


@dataclass(slots=True)
class SweepResult:
    runs: list[RunStats] = field(default_factory=list)
    failures: list[SimulationFailure] = field(default_factory=list)


def sweep(
    start: int, count: int, params: SimulationParams, stop_at_first_failure: bool = True
) -> SweepResult:
    result = SweepResult()
    for seed in range(start, start + count):
        try:
            result.runs.append(run_seed(seed, params))
        except SimulationFailure as failure:
            result.failures.append(failure)
            if stop_at_first_failure:
                break
    return result
