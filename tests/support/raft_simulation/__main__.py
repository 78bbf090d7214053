"""Sweep seeds of the Raft simulator: ``python -m raft_simulation --seeds N --start S``.

Prints one summary table for the sweep. On a failure prints the seed, what broke, the end of
its event trace and the command that replays it exactly (add ``--trace`` to see every event);
the exit status is 1. ``--fault`` runs a deliberately broken core, to see that it is caught.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from raft_simulation.cluster import RunStats, SimulationParams
from raft_simulation.mutants import CoreFault
from raft_simulation.sweep import SimulationFailure, replay, run_seed


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m raft_simulation", description=__doc__)
    parser.add_argument("--seeds", type=int, default=100, help="how many seeds to run")
    parser.add_argument("--start", type=int, default=0, help="first seed")
    parser.add_argument("--nodes", type=int, choices=[3, 5], help="default: 3 or 5 by seed")
    parser.add_argument("--chaos-ticks", type=int, default=SimulationParams().chaos_ticks)
    parser.add_argument(
        "--fault",
        choices=[f.value for f in CoreFault],
        default=CoreFault.NONE.value,
        help="run a deliberately broken core",
    )
    parser.add_argument("--no-torn-writes", action="store_true")
    parser.add_argument(
        "--lose-all-unsynced", action="store_true", help="a crash keeps no unsynced write"
    )
    parser.add_argument(
        "--crash-all",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="crash every node at once during chaos (default: 30%% of seeds)",
    )
    parser.add_argument(
        "--membership",
        action="store_true",
        help="add and remove voters during chaos (4 to 6 nodes, 1 to 5 voters at first)",
    )
    parser.add_argument("--trace", action="store_true", help="print every event of each run")
    parser.add_argument("--keep-going", action="store_true", help="do not stop at a failure")
    parser.add_argument("--workers", type=int, default=1, help="processes (seeds are independent)")
    return parser


def _run(args: tuple[int, SimulationParams]) -> RunStats | SimulationFailure:
    seed, params = args
    try:
        return run_seed(seed, params)
    except SimulationFailure as failure:
        return failure


def _table(runs: list[RunStats], failures: int, elapsed_s: float) -> list[str]:
    def total(name: str) -> int:
        return sum(int(getattr(r, name)) for r in runs)

    seeds = len(runs) + failures
    recovery = [r.recovery_ticks for r in runs] or [0]
    max_term = max((r.max_term for r in runs), default=0)
    three = sum(r.nodes == 3 for r in runs)  # voters at first (membership: nodes vary)
    rows = [
        ("seeds run", f"{seeds}"),
        ("passed / failed", f"{len(runs)} / {failures}"),
        ("3-node / 5-node runs passed", f"{three} / {len(runs) - three}"),
        ("virtual ticks", f"{total('virtual_ticks')}"),
        ("leaders elected (max term)", f"{total('leaders')} ({max_term})"),
        ("entries committed", f"{total('committed')}"),
        ("crashes (runs that crashed all)", f"{total('crashes')} ({total('crash_all')})"),
        ("network faults", f"{total('partitions')}"),
        ("messages sent (lost)", f"{total('messages')} ({total('dropped')})"),
        ("unsynced writes lost (torn)", f"{total('lost_writes')} ({total('torn_writes')})"),
        ("snapshots installed", f"{total('snapshots_installed')}"),
        ("linearizable reads checked", f"{total('reads_checked')}"),
        (
            "leader-down reports (false)",
            f"{total('down_reports')} ({total('false_down_reports')})",
        ),
        (
            "leader-down acted on (false)",
            f"{total('down_reports_acted_on')} ({total('false_down_reports_acted_on')})",
        ),
        (
            "voter changes (refused)",
            f"{total('config_changes')} ({total('config_changes_refused')})",
        ),
        ("leaders removing themselves", f"{total('leaders_removed')}"),
        ("voters wiped", f"{total('wipes')}"),
        ("recovery ticks mean / max", f"{sum(recovery) / len(recovery):.1f} / {max(recovery)}"),
        ("wall time", f"{elapsed_s:.1f} s ({seeds / max(elapsed_s, 1e-9):.0f} seeds/s)"),
    ]
    width = max(len(name) for name, _ in rows)
    return [f"{name:<{width}}  {value}" for name, value in rows]


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    params = SimulationParams(
        nodes=args.nodes,
        chaos_ticks=args.chaos_ticks,
        fault=CoreFault(args.fault),
        torn_writes=not args.no_torn_writes,
        lose_all_unsynced=args.lose_all_unsynced,
        crash_all=args.crash_all,
        membership=args.membership,
        trace=args.trace,
    )
    seeds = [(seed, params) for seed in range(args.start, args.start + args.seeds)]
    runs: list[RunStats] = []
    failures: list[SimulationFailure] = []
    started = time.perf_counter()
    if args.trace:
        return _trace(seeds)
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            results = list(pool.map(_run, seeds, chunksize=16))
    else:
        results = []
        for item in seeds:
            results.append(_run(item))
            if isinstance(results[-1], SimulationFailure) and not args.keep_going:
                break
    for result in results:
        if isinstance(result, SimulationFailure):
            failures.append(result)
        else:
            runs.append(result)
    print("\n".join(_table(runs, len(failures), time.perf_counter() - started)))
    for failure in failures[:10]:
        print(f"\nFAILED seed {failure.seed}: {failure.reason}")
        print("  last events:")
        for line in failure.trace_tail[-20:]:
            print(f"    {line}")
        print(f"  replay: {failure.replay}")
    if len(failures) > 10:
        print(f"\n... and {len(failures) - 10} more failing seeds")
    return 1 if failures else 0


def _trace(seeds: list[tuple[int, SimulationParams]]) -> int:
    """Replay mode: every event of each seed, then its outcome."""
    status = 0
    for seed, params in seeds:
        print(f"== seed {seed}")
        trace, outcome = replay(seed, params)
        print("\n".join(trace))
        if isinstance(outcome, SimulationFailure):
            print(f"FAILED seed {seed}: {outcome.reason}")
            status = 1
        else:
            print(f"passed: {outcome}")
    return status


if __name__ == "__main__":
    sys.exit(main())
