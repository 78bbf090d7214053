"""The chaos side by side's pause row, repeated: one target paused again and again for less
than the session timeout, against Kafka 4.4 and rillet, and how soon each partition
acknowledges again after SIGCONT.

A pause shorter than ``broker.session.timeout.ms`` fences nobody: every partition whose ISR
holds the paused node waits out the pause (acks=all counts every in-sync replica), so the
side by side's pause row is the pause's length plus how soon writes resume after it. That
second part is what this measures, per pause and partition: the first acknowledgement whose
delivery report came after the SIGCONT, less the SIGCONT's time (the "resume delay"). Both
targets run the same steps (``--pauses`` pauses of ``--pause-s`` each, ``--gap-s`` apart,
of ``--target``: the Raft leader / active controller, a partition's leader, or a node), the
same librdkafka workload and the same checker as bench/chaos_side_by_side.py.

    .venv/bin/python bench/pause_row.py --pauses 6 --pause-s 2.5 --target raft-leader

Prints one JSON line (bench/_common.py); per-pause lines go to stderr.
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from _common import REPO, emit, parser

from rillet.chaos import runner
from rillet.chaos.history import HISTORY_FILE, History, load_history
from rillet.chaos.runner import RunConfig, judge, run_once
from rillet.chaos.schedule import FaultStep, Schedule

sys.path.insert(0, str(REPO / "tests" / "support"))  # the real Kafka launcher lives there

from _kafka_chaos import run_kafka_once

WARMUP_S = 4.0
COOLDOWN_S = 4.0


def pause_schedule(pauses: int, pause_s: float, gap_s: float, target: str) -> Schedule:
    """``pauses`` pauses of ``target`` (partition leaders take turns), ``gap_s`` apart."""
    steps = []
    at = WARMUP_S
    for i in range(pauses):
        steps.append(
            FaultStep(
                index=i,
                kind="pause",
                start_s=round(at, 3),
                heal_s=round(at + pause_s, 3),
                target=target,
                node=(i % 3) + 1 if target == "node" else None,
                partition=i % 6 if target == "partition-leader" else None,
            )
        )
        at += pause_s + gap_s
    return Schedule(seed=0, duration_s=at + COOLDOWN_S, nodes=3, max_down=1, steps=steps)


def resume_delays(history: History) -> list[dict[str, Any]]:
    """Per applied fault: each partition's first acknowledgement after its heal (a pause's
    SIGCONT), in seconds after it (None: none before the next fault started)."""
    acks: dict[int, list[float]] = {}
    for w in history.acknowledged():
        if w.done_t is not None:
            acks.setdefault(w.partition, []).append(w.done_t)
    for times in acks.values():
        times.sort()
    applied = [f for f in history.faults if f.skipped is None and f.heal_t is not None]
    out = []
    for i, f in enumerate(applied):
        assert f.heal_t is not None
        until = applied[i + 1].start_t if i + 1 < len(applied) else float("inf")
        delays: dict[int, float | None] = {}
        for p, times in sorted(acks.items()):
            after = next((t for t in times if f.heal_t <= t < until), None)
            delays[p] = None if after is None else round(after - f.heal_t, 3)
        known = [d for d in delays.values() if d is not None]
        out.append(
            {
                "kind": f.kind,
                "node": f.node,
                "pause_s": round(f.heal_t - f.start_t, 3),
                "delays_s": delays,
                "worst_s": max(known) if known else None,
                "median_s": round(statistics.median(known), 3) if known else None,
            }
        )
    return out


def main() -> int:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--pauses", type=int, default=6)
    ap.add_argument("--pause-s", type=float, default=2.5)
    ap.add_argument("--gap-s", type=float, default=4.0)
    ap.add_argument(
        "--target", default="raft-leader", choices=("raft-leader", "partition-leader", "node")
    )
    ap.add_argument("--targets", default="kafka,rillet")
    ap.add_argument("--out", type=Path, default=Path("rillet-pause-row"))
    ap.add_argument("--start-timeout-s", type=float, default=runner.START_TIMEOUT_S)
    ap.add_argument("--keep-data", action="store_true", help="keep the nodes' logs and data")
    args = ap.parse_args()
    runner.START_TIMEOUT_S = args.start_timeout_s
    schedule = pause_schedule(args.pauses, args.pause_s, args.gap_s, args.target)
    base = RunConfig(
        duration_s=schedule.duration_s,
        faults=("pause",),
        client="kafka",
        churn=False,
        seed=0,
        keep_data=args.keep_data,
    )
    results: dict[str, Any] = {}
    for target in args.targets.split(","):
        # rillet-direct: no link proxies (network "direct"), like Kafka's nodes here.
        network = "direct" if target == "rillet-direct" else "proxy"
        config = replace(base, out_dir=args.out.resolve() / target, network=network)
        started = time.monotonic()
        print(f"{target} ...", file=sys.stderr)
        if target.startswith("rillet"):
            summary = run_once(config, schedule=schedule).summary
        else:
            from real_kafka import ensure_jars

            run_kafka_once(config, ensure_jars(), config.run_dir(), schedule=schedule)
            summary = judge(config, config.run_dir()).summary
        pauses = resume_delays(load_history(config.run_dir() / HISTORY_FILE))
        worst = [p["worst_s"] for p in pauses if p["worst_s"] is not None]
        results[target] = {
            "verdict": summary["verdict"],
            "violations": [v["check"] for v in summary["violations"]],
            "writes": summary["writes"],
            "pauses": pauses,
            "worst_resume_s": max(worst) if worst else None,
            "median_worst_resume_s": round(statistics.median(worst), 3) if worst else None,
            "wall_s": round(time.monotonic() - started, 1),
        }
        for p in pauses:
            print(
                f"  {target} node {p['node']}: worst {p['worst_s']} {p['delays_s']}",
                file=sys.stderr,
            )
    params = {k: str(v) for k, v in vars(args).items()}
    emit("pause_row", params, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
