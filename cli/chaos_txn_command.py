"""``rillet chaos txn``: the transactional workload under the seeded faults (docs/chaos.md).

Takes the options ``rillet chaos run`` takes for the cluster and the schedule; the workload
is ``--producers`` transactional writers (committing and aborting across the partitions of
the input topic), ``--members`` consume-transform-produce workers (offsets in the
transaction) and one reader per isolation level, all confluent-kafka clients. Prints one line
per seed and, after a sweep, the counts; exits 1 when a seed shows an anomaly.
"""

from __future__ import annotations

import argparse
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from rillet.chaos.kafka_clients import unavailable_reason
from rillet.chaos.runner import replay_command
from rillet.chaos.txn_runner import TxnRunResult, run_txn_once
from rillet.cli.common import non_negative_int, positive_int


def configure(txn: Any) -> None:
    txn.add_argument("--seeds", type=positive_int, default=1, help="sweep K seeds from --seed")
    txn.add_argument("--producers", type=positive_int, default=2, help="transactional writers")
    txn.add_argument(
        "--members", type=non_negative_int, default=1, help="consume-transform-produce workers"
    )
    txn.add_argument("--min-insync", type=positive_int, default=2, help="topic min.insync")
    txn.add_argument("--out", type=Path, default=Path("rillet-chaos-txn"), help="run directories")
    txn.add_argument("--keep-data", action="store_true", help="keep node data of clean runs")
    txn.set_defaults(run=run_txn, client="kafka")


def run_txn(args: argparse.Namespace) -> int:
    from rillet.cli.chaos_command import config_from

    try:
        base = config_from(args)
        base.check()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if (reason := unavailable_reason()) is not None:
        print(f"error: rillet chaos txn cannot run here: {reason}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _interrupt)
    bad: list[int] = []
    failed: list[int] = []
    done = 0
    for seed in range(base.seed, base.seed + args.seeds):
        config = replace(base, seed=seed)
        try:
            result = run_txn_once(config)
        except Exception as exc:  # the harness itself failed: say so, go on with the sweep
            print(f"seed {seed}: harness error: {type(exc).__name__}: {exc}", flush=True)
            failed.append(seed)
            continue
        done += 1
        _print(result)
        if not result.ok:
            bad.append(seed)
    print(f"{done} seed(s), {len(bad)} with anomalies", flush=True)
    if failed:
        print(f"harness errors (no verdict) on seed(s): {', '.join(map(str, failed))}")
    return 1 if bad or failed else 0


def _print(result: TxnRunResult) -> None:
    s = result.summary
    faults = ", ".join(f"{k} x{n}" for k, n in s["faults"].items()) or "none"
    print(
        f"seed {result.config.seed}: transactions {s['transactions']}, "
        f"consume-transform-produce {s['ctp_transactions']}; faults: {faults}; "
        f"{'ok' if result.ok else 'ANOMALIES'}",
        flush=True,
    )
    for v in result.violations:
        print(f"    {v.check}: {v.message}; e.g. {v.examples[:3]}", flush=True)
    if not result.ok:
        cmd = replay_command(result.config).replace("chaos run", "chaos txn")
        print(f"  files: {result.run_dir}\n  replay: {cmd}", flush=True)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
