"""The chaos harness's Kafka-client workload and seeded schedule against Apache Kafka 4.x and
against rillet, side by side: per fault kind, the worst partition's write gap on each.

Both targets get the same seed's schedule, the same librdkafka idempotent acks=all producers
(confluent-kafka), the same classic-group member processes and the same checker (nothing
acknowledged may be lost, duplicated or reordered, on Kafka too). Rillet runs as in
``rillet chaos run --client kafka --no-churn --network direct`` (3 s sessions and lag);
Kafka runs three combined broker+controller processes with the same timeouts
(bench/_kafka_chaos.py). Rillet's nodes reach each other straight (``--network direct``) as
Kafka's do; with ``partition`` faults both targets' node-to-node links run through the
harness's link proxies (bench/_kafka_chaos.py tells how Kafka's are wired). Each pause is
also reported as its length and the time from its SIGCONT to each partition's next
acknowledgement (bench/pause_row.py).

    .venv/bin/python bench/chaos_side_by_side.py --seed 1 --duration 60 \\
        --faults kill-leader,kill-partition-leader,kill-any,pause
    .venv/bin/python bench/chaos_side_by_side.py --seed 1 --duration 45 \\
        --faults kill-two,kill-all --max-down 3 --allow-majority

Prints one JSON line (bench/_common.py); the per-kind table and progress go to stderr.
Run directories (history, summary, timeline) stay under ``--out``.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from _common import REPO, emit, parser

from rillet.chaos import runner
from rillet.chaos.history import HISTORY_FILE, load_history
from rillet.chaos.runner import RunConfig, judge, run_once
from rillet.chaos.schedule import parse_faults

sys.path.insert(0, str(REPO / "tests" / "support"))  # the real Kafka launcher lives there

from _kafka_chaos import run_kafka_once
from pause_row import resume_delays


def per_kind(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """fault kind -> worst partition gap (and worst among partitions with a full ISR)."""
    out: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"worst_s": 0.0, "full_isr_s": 0.0, "n": 0}
    )
    for row in summary.get("availability", []):
        kind = out[row["kind"]]
        kind["n"] += 1
        kind["worst_s"] = max(kind["worst_s"], row["longest_partition_gap_s"] or 0.0)
        kind["full_isr_s"] = max(kind["full_isr_s"], row["longest_full_isr_gap_s"] or 0.0)
    return dict(out)


def main() -> int:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--faults", default="kill-leader,kill-partition-leader,kill-any,pause")
    ap.add_argument("--max-down", type=int, default=None)
    ap.add_argument("--allow-majority", action="store_true")
    ap.add_argument("--targets", default="kafka,rillet")
    ap.add_argument(
        "--rillet-network",
        choices=("direct", "proxy"),
        default=None,
        help="direct (the default without partition faults): rillet's nodes reach each other "
        "straight, as Kafka's do then; proxy (the default with them, for both targets): "
        "through the harness's link proxies",
    )
    ap.add_argument("--out", type=Path, default=Path("rillet-chaos-side-by-side"))
    ap.add_argument(
        "--start-timeout-s",
        type=float,
        default=runner.START_TIMEOUT_S,
        help="how long a rillet cluster may take to start (a machine shared with other "
        "heavy work needed more than the harness's 60 s)",
    )
    args = ap.parse_args()
    runner.START_TIMEOUT_S = args.start_timeout_s
    base = RunConfig(
        duration_s=args.duration,
        faults=parse_faults(args.faults),
        client="kafka",
        churn=False,
        max_down=args.max_down,
        allow_majority=args.allow_majority,
        network=args.rillet_network
        or ("proxy" if "partition" in parse_faults(args.faults) else "direct"),
    )
    results: dict[str, Any] = {}
    for seed in range(args.seed, args.seed + args.seeds):
        for target in args.targets.split(","):
            config = replace(base, seed=seed, out_dir=args.out.resolve() / target)
            started = time.monotonic()
            print(f"seed {seed}: {target} ...", file=sys.stderr)
            if target == "rillet":
                summary = run_once(config).summary
            else:
                from real_kafka import ensure_jars

                run_kafka_once(config, ensure_jars(), config.run_dir())
                summary = judge(config, config.run_dir()).summary
            pauses = resume_delays(load_history(config.run_dir() / HISTORY_FILE))
            results[f"{target}/{seed}"] = {
                "verdict": summary["verdict"],
                "violations": [v["check"] for v in summary["violations"]],
                "writes": summary["writes"],
                "faults": summary["faults"],
                "per_kind": per_kind(summary),
                # Per fault: its length and how soon every partition acknowledged after its
                # heal (for a pause, after the SIGCONT).
                "after_heal": [
                    {k: p[k] for k in ("kind", "node", "pause_s", "worst_s", "median_s")}
                    for p in pauses
                ],
                "wall_s": round(time.monotonic() - started, 1),
            }
            print(f"  {results[f'{target}/{seed}']}", file=sys.stderr)
    kinds = sorted({k for r in results.values() for k in r["per_kind"]})
    table: dict[str, dict[str, float | None]] = {}
    for kind in kinds:
        table[kind] = {}
        for target in args.targets.split(","):
            gaps = [
                r["per_kind"][kind]["worst_s"]
                for key, r in results.items()
                if key.startswith(target + "/") and kind in r["per_kind"]
            ]
            table[kind][target] = round(max(gaps), 2) if gaps else None
        print(
            f"| {kind} | " + " | ".join(str(v) for v in table[kind].values()) + " |",
            file=sys.stderr,
        )
    params = {k: str(v) for k, v in vars(args).items()}
    emit("chaos_side_by_side", params, {"table": table, "runs": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
