"""``rillet chaos run|check|report|schedule|faults``: seeded faults against a local cluster.

``run`` starts a fresh cluster of real node processes, runs the workload while the seeded
schedule's faults hit it, heals, and checks the history (docs/chaos.md). It prints the
summary; when the checker finds a violation it prints the seed and the exact command that
replays the run, and exits 1. ``--seeds K`` runs K consecutive seeds and prints a table.
``check DIR`` judges a finished run's files again; ``report DIR`` sums up a sweep's runs
(totals, the worst partition's write gaps by fault kind, one row per seed; ``--markdown``
for docs/chaos.md); ``schedule`` prints the steps a seed gives without running anything;
``faults`` lists the fault kinds.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from rillet.broker.config.quorum_config import ENGINES
from rillet.chaos.errors import ChaosError
from rillet.chaos.kafka_clients import unavailable_reason as kafka_clients_unavailable
from rillet.chaos.kernel_network import unavailable_reason as kernel_network_unavailable
from rillet.chaos.runner import (
    CLIENTS,
    NETWORKS,
    RunConfig,
    RunResult,
    judge,
    replay_command,
    run_once,
    schedule_for,
)
from rillet.chaos.schedule import DEFAULT_FAULTS, FAULT_KINDS, minority, parse_faults
from rillet.chaos.sweep_report import SeedRow, gaps_by_kind, load_sweep, markdown, totals
from rillet.cli import chaos_txn_command
from rillet.cli.common import non_negative_int, positive_int, print_table

SWEEP_HEADER = (
    "SEED",
    "FAULTS",
    "ACKED",
    "UNKNOWN",
    "ACK/S",
    "P99 MS",
    "PARTITION GAP S",
    "CLUSTER GAP S",
    "VERDICT",
)


def _faults_arg(text: str) -> tuple[str, ...]:
    try:
        return parse_faults(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value:g}")
    return value


def _range_arg(text: str) -> tuple[float, float]:
    low, sep, high = text.partition(",")
    try:
        pair = (float(low), float(high if sep else low))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MIN,MAX seconds, got {text!r}") from None
    if not 0 <= pair[0] <= pair[1]:
        raise argparse.ArgumentTypeError(f"need 0 <= MIN <= MAX, got {text!r}")
    return pair


def register(sub: Any) -> None:
    chaos = sub.add_parser("chaos", help="seeded fault injection against a local cluster")
    csub = chaos.add_subparsers(dest="chaos_command", required=True, metavar="ACTION")
    run = csub.add_parser("run", help="run one seed (or --seeds K) and check the history")
    sched = csub.add_parser("schedule", help="print the fault steps a seed gives (no cluster)")
    txn = csub.add_parser("txn", help="the transactional workload under seeded faults")
    chaos_txn_command.configure(txn)
    for p in (run, sched, txn):
        p.add_argument("--seed", type=non_negative_int, default=1, help="default 1")
        p.add_argument("--nodes", type=positive_int, default=3, help="voters (default 3)")
        p.add_argument("--duration", type=_positive_float, default=60.0, help="seconds")
        p.add_argument(
            "--faults",
            type=_faults_arg,
            default=DEFAULT_FAULTS,
            help=f"comma-separated kinds, or all (default {','.join(DEFAULT_FAULTS)})",
        )
        p.add_argument("--partitions", type=positive_int, default=6)
        p.add_argument(
            "--engine",
            choices=ENGINES,
            default=RunConfig().engine,
            help="metadata quorum engine (default %(default)s; partitions need raft)",
        )
        p.add_argument(
            "--network",
            choices=NETWORKS,
            default=RunConfig().network,
            help="proxy: nodes on 127.0.0.1, links through user-space proxies, short "
            "timeouts; kernel: each node in its own network namespace and address, links "
            "cut with `ip link`, default timeouts (needs root and iproute2); direct: as "
            "proxy without the proxies, no network partitions (default %(default)s)",
        )
        p.add_argument(
            "--max-down", type=non_negative_int, help="nodes down at once (default: a minority)"
        )
        p.add_argument(
            "--allow-majority", action="store_true", help="let --max-down exceed a minority"
        )
        p.add_argument(
            "--windows",
            type=_range_arg,
            default=RunConfig().windows,
            metavar="MIN,MAX",
            help="seconds a fault lasts (default %(default)s)",
        )
        p.add_argument(
            "--gaps",
            type=_range_arg,
            default=RunConfig().gaps,
            metavar="MIN,MAX",
            help="seconds between faults (default %(default)s)",
        )
    run.add_argument("--seeds", type=positive_int, default=1, help="sweep K seeds from --seed")
    run.add_argument(
        "--client",
        choices=CLIENTS,
        default=RunConfig().client,
        help="native: rillet's producers and group members; kafka: confluent-kafka "
        "idempotent acks=all producers and classic-group consumers through the nodes' Kafka "
        "listeners (default %(default)s)",
    )
    run.add_argument("--producers", type=positive_int, default=2)
    run.add_argument(
        "--rate", type=_positive_float, default=RunConfig().rate, help="records/s/producer"
    )
    run.add_argument("--members", type=non_negative_int, default=2, help="group members")
    run.add_argument(
        "--no-churn", action="store_true", help="no topic create/delete during the faults"
    )
    run.add_argument("--min-insync", type=positive_int, default=2, help="topic min.insync")
    run.add_argument(
        "--flush-ms", type=non_negative_int, default=None, help="topic flush.ms (default: none)"
    )
    run.add_argument("--out", type=Path, default=Path("rillet-chaos"), help="run directories")
    run.add_argument("--keep-data", action="store_true", help="keep node data of clean runs")
    run.add_argument("--json", action="store_true", help="print the summaries as JSON")
    run.set_defaults(run=run_run)
    sched.set_defaults(run=run_schedule)
    check = csub.add_parser("check", help="judge a finished run directory again")
    check.add_argument("run_dir", type=Path)
    check.set_defaults(run=run_check)
    report = csub.add_parser("report", help="sum up a sweep's run directories")
    report.add_argument("out", type=Path, help="the --out directory of the sweep")
    report.add_argument("--markdown", action="store_true", help="Markdown tables")
    report.set_defaults(run=run_report)
    faults = csub.add_parser("faults", help="list the fault kinds")
    faults.set_defaults(run=run_faults)


def config_from(args: argparse.Namespace) -> RunConfig:
    too_many = args.max_down is not None and args.max_down > minority(args.nodes)
    if too_many and not args.allow_majority:
        raise ValueError(
            f"--max-down {args.max_down} exceeds a minority of {args.nodes} nodes: "
            "add --allow-majority"
        )
    return RunConfig(
        seed=args.seed,
        nodes=args.nodes,
        engine=args.engine,
        network=args.network,
        client=getattr(args, "client", RunConfig().client),
        duration_s=args.duration,
        faults=args.faults,
        partitions=args.partitions,
        producers=getattr(args, "producers", 2),
        rate=getattr(args, "rate", RunConfig().rate),
        members=getattr(args, "members", 2),
        churn=not getattr(args, "no_churn", False),
        max_down=args.max_down,
        allow_majority=args.allow_majority,
        min_insync=getattr(args, "min_insync", 2),
        flush_ms=getattr(args, "flush_ms", None),
        windows=getattr(args, "windows", RunConfig().windows),
        gaps=getattr(args, "gaps", RunConfig().gaps),
        out_dir=getattr(args, "out", Path("rillet-chaos")),
        keep_data=getattr(args, "keep_data", False),
    )


def run_schedule(args: argparse.Namespace) -> int:
    try:
        schedule = schedule_for(config_from(args))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"seed {schedule.seed}: {len(schedule.steps)} faults, at most {schedule.max_down} down")
    for step in schedule.steps:
        print(f"  {step.index:>3}  {step.describe()}")
    return 0


def run_faults(args: argparse.Namespace) -> int:
    rows: list[tuple[str, ...]] = [("KIND", "AVAILABLE", "WHAT")]
    rows += [
        (k.name, "yes" if k.available else "later", k.description) for k in FAULT_KINDS.values()
    ]
    print_table(rows)
    return 0


def run_run(args: argparse.Namespace) -> int:
    try:
        base = config_from(args)
        base.check()
        schedule_for(base)  # reject a bad configuration before starting anything
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if base.client == "kafka" and (reason := kafka_clients_unavailable()) is not None:
        print(f"error: --client kafka cannot run here: {reason}", file=sys.stderr)
        return 2
    if base.network == "kernel" and (reason := kernel_network_unavailable()) is not None:
        print(f"error: --network kernel cannot run here: {reason}", file=sys.stderr)
        return 2
    # A sweep stopped with SIGTERM (kill, a CI timeout) unwinds like Ctrl-C, so every node
    # and member process it started is stopped instead of left running.
    signal.signal(signal.SIGTERM, _interrupt)
    results: list[RunResult] = []
    harness_failed: list[int] = []
    for seed in range(base.seed, base.seed + args.seeds):
        config = replace(base, seed=seed)
        try:
            result = run_once(config)
        except Exception as exc:  # the harness itself failed: say so, go on with the sweep
            print(f"seed {seed}: harness error: {type(exc).__name__}: {exc}", file=sys.stderr)
            print(f"replay: {replay_command(config)}", file=sys.stderr)
            if args.seeds == 1:
                return 1
            harness_failed.append(seed)
            continue
        results.append(result)
        _print_result(result, args.json)
    if args.seeds == 1:
        return 0 if results[0].ok else 1
    return _finish_sweep(results, harness_failed)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run_check(args: argparse.Namespace) -> int:
    run_dir: Path = args.run_dir
    try:
        raw = json.loads((run_dir / "summary.json").read_text())["config"]
    except (OSError, KeyError, ValueError) as exc:
        print(f"error: {run_dir} has no readable summary.json: {exc}", file=sys.stderr)
        return 2
    config = RunConfig.from_json(raw, run_dir.parent)
    result = judge(config, run_dir)
    _print_result(result, False)
    return 0 if result.ok else 1


def run_report(args: argparse.Namespace) -> int:
    try:
        rows = load_sweep(args.out)
    except ChaosError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    t = totals(rows)
    if args.markdown:
        print(markdown(rows), end="")
    else:
        print(
            f"{t['seeds']} seed(s) ({t['first_seed']}-{t['last_seed']}): {t['faults']} faults, "
            f"{t['acknowledged']} acknowledged, {t['unknown']} unknown, "
            f"{t['violations']} violation(s); longest gap in one partition "
            f"{t['longest_partition_gap_s']} s, on all partitions {t['longest_write_gap_s']} s"
        )
        if t["failing_seeds"]:
            print(f"seeds with violations: {', '.join(map(str, t['failing_seeds']))}")
        print()
        _print_gaps(rows)
    return 1 if t["violations"] else 0


def _print_gaps(rows: list[SeedRow]) -> None:
    """Per fault kind: the worst partition's gap (median, p90, max), then the cluster-wide
    gap's maximum (no acknowledged write on any partition)."""
    table: list[tuple[str, ...]] = [
        ("FAULT KIND", "APPLIED", "PARTITION GAP MEDIAN S", "P90 S", "MAX S", "CLUSTER MAX S")
    ]
    for kind, g in gaps_by_kind(rows).items():
        p = g.partition
        worst = (f"{p.median_s:.2f}", f"{p.p90_s:.2f}", f"{p.max_s:.2f}") if p else ("-", "-", "-")
        table.append((kind, str(g.applied), *worst, f"{g.cluster.max_s:.2f}"))
    print_table(table)


def _print_result(result: RunResult, as_json: bool) -> None:
    s = result.summary
    if as_json:
        print(json.dumps(s, indent=2))
        return
    w, lat = s["writes"], s["latency_ms"]
    print(
        f"seed {result.config.seed}: {w['ok']} acknowledged, {w['unknown']} unknown, "
        f"{w['fail']} failed of {w['invoked']} writes; {w['acks_per_s']} acks/s; "
        f"latency p50 {lat['p50']} ms p99 {lat['p99']} ms; "
        f"longest write gap in one partition {s['max_partition_gap_s']} s "
        f"(on all partitions {s['max_write_gap_s']} s)"
    )
    faults = ", ".join(f"{k} x{n}" for k, n in s["faults"].items()) or "none"
    print(f"  faults: {faults}")
    print(f"  files: {result.run_dir}")
    if result.ok:
        print("  verdict: ok, 0 violations")
        return
    print(f"  verdict: {len(result.violations)} VIOLATION(S) with seed {result.config.seed}")
    for v in result.violations:
        print(f"    {v.check}: {v.message}")
        for example in v.details.get("examples", [])[:3]:
            print(f"      e.g. {example}")
    print(f"  replay: {replay_command(result.config)}")


def _finish_sweep(results: list[RunResult], harness_failed: list[int] | None = None) -> int:
    """The sweep's table; exit status 1 if a seed broke a check or the harness failed on
    one (those seeds are named, to be run again)."""
    rows: list[tuple[str, ...]] = [SWEEP_HEADER]
    seeds = [SeedRow(r.config.seed, r.summary) for r in results]
    for r, seed_row in zip(results, seeds, strict=True):
        s = r.summary
        rows.append(
            (
                str(r.config.seed),
                str(sum(seed_row.faults_applied.values())),
                str(s["writes"]["ok"]),
                str(s["writes"]["unknown"]),
                str(s["writes"]["acks_per_s"]),
                str(s["latency_ms"]["p99"]),
                str(s["max_partition_gap_s"]),
                str(s["max_write_gap_s"]),
                "ok" if r.ok else f"{len(r.violations)} violation(s)",
            )
        )
    print()
    print_table(rows)
    if results:
        print()
        _print_gaps(seeds)
    bad = [r for r in results if not r.ok]
    print(f"{len(results)} seed(s), {len(bad)} with violations")
    for r in bad:
        print(f"  seed {r.config.seed}: {replay_command(r.config)}")
    if harness_failed:
        print(f"harness errors (no verdict) on seed(s): {', '.join(map(str, harness_failed))}")
    return 1 if bad or harness_failed else 0
