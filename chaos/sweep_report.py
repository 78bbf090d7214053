"""What a sweep of many seeds showed, from the ``summary.json`` each run left behind.

A sweep runs for hours; its result is the directory of run folders, not the process that
made them. Reading the summaries back (instead of keeping totals in the sweeping process)
lets a sweep that was stopped, split in parts or re-judged be reported the same way, and
lets the sweep tables (docs/chaos.md, docs/measurements/) be made again from the files.

The gaps by fault kind are the worst partition's gap around each fault (what a client of the
unluckiest partition waited), with the cluster-wide gap (no acknowledged write on any
partition) beside it as a secondary figure; summaries written before the per-partition
measurement have no partition gap and count only in the cluster-wide column.
"""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rillet.chaos.errors import ChaosError
from rillet.chaos.report import SUMMARY_FILE, percentile

RUN_DIR_PREFIX = "seed-"


@dataclass(frozen=True, slots=True)
class SeedRow:
    """One finished run of a sweep: its seed and its ``summary.json``."""

    seed: int
    summary: dict[str, Any]

    @property
    def faults_applied(self) -> dict[str, int]:
        """Fault counts by kind, without the faults the schedule had to skip."""
        return {k: n for k, n in self.summary["faults"].items() if "skipped" not in k}

    @property
    def violations(self) -> int:
        return len(self.summary["violations"])


@dataclass(frozen=True, slots=True)
class GapStats:
    """Longest write gaps around the faults of one kind, in seconds."""

    applied: int
    median_s: float
    p90_s: float
    max_s: float

    @classmethod
    def of(cls, values: list[float]) -> GapStats | None:
        if not values:
            return None
        values = sorted(values)
        p90 = percentile(values, 0.9)
        assert p90 is not None  # values is not empty
        return cls(len(values), statistics.median(values), p90, values[-1])


@dataclass(frozen=True, slots=True)
class KindGaps:
    """One fault kind's gaps: the worst partition's (None for summaries from before it was
    measured) and the cluster-wide one."""

    applied: int
    partition: GapStats | None
    cluster: GapStats


SUMMARY_KEYS = ("violations", "writes", "faults", "availability", "max_write_gap_s")


def load_sweep(out_dir: Path) -> list[SeedRow]:
    """Every finished run under ``out_dir`` (``seed-N/summary.json``), by seed.

    A summary that cannot be read is skipped with a note on stderr rather than ending the
    report: a sweep still running may be writing one at this moment."""
    rows = []
    for run_dir in out_dir.glob(f"{RUN_DIR_PREFIX}*"):
        suffix = run_dir.name[len(RUN_DIR_PREFIX) :]
        path = run_dir / SUMMARY_FILE
        if not suffix.isdigit() or not path.is_file():
            continue  # a run still going, or stopped before it was judged
        try:
            summary = json.loads(path.read_text())
            missing = [k for k in SUMMARY_KEYS if k not in summary]
        except (OSError, ValueError, TypeError) as exc:
            print(f"skipped {path}: not a readable summary ({exc})", file=sys.stderr)
            continue
        if missing:
            print(f"skipped {path}: no {', '.join(missing)}", file=sys.stderr)
            continue
        rows.append(SeedRow(int(suffix), summary))
    if not rows:
        raise ChaosError(f"no finished runs ({RUN_DIR_PREFIX}N/{SUMMARY_FILE}) under {out_dir}")
    return sorted(rows, key=lambda r: r.seed)


def totals(rows: list[SeedRow]) -> dict[str, Any]:
    """What the whole sweep adds up to (``rows`` is never empty: load_sweep refuses that)."""
    return {
        "seeds": len(rows),
        "first_seed": rows[0].seed,
        "last_seed": rows[-1].seed,
        "faults": sum(sum(r.faults_applied.values()) for r in rows),
        "acknowledged": sum(r.summary["writes"]["ok"] for r in rows),
        "unknown": sum(r.summary["writes"]["unknown"] for r in rows),
        "violations": sum(r.violations for r in rows),
        "failing_seeds": [r.seed for r in rows if r.violations],
        "longest_write_gap_s": max(r.summary["max_write_gap_s"] for r in rows),
        "longest_partition_gap_s": max(
            (partition_gap(r) or 0.0 for r in rows),
            default=0.0,
        ),
    }


def partition_gap(row: SeedRow) -> float | None:
    """The run's longest single-partition gap (None in a summary from before it existed)."""
    value = row.summary.get("max_partition_gap_s")
    return None if value is None else float(value)


def gaps_by_kind(rows: list[SeedRow]) -> dict[str, KindGaps]:
    """The gaps charged to each applied fault, pooled by fault kind."""
    cluster: dict[str, list[float]] = {}
    partition: dict[str, list[float]] = {}
    for r in rows:
        for a in r.summary["availability"]:
            cluster.setdefault(a["kind"], []).append(float(a["longest_write_gap_s"]))
            worst = a.get("longest_partition_gap_s")
            if worst is not None:
                partition.setdefault(a["kind"], []).append(float(worst))
    out = {}
    for kind, values in sorted(cluster.items()):
        stats = GapStats.of(values)
        assert stats is not None  # a kind is only listed with a gap
        out[kind] = KindGaps(len(values), GapStats.of(partition.get(kind, [])), stats)
    return out


def bound_rows(rows: list[SeedRow]) -> list[tuple[str, int, int, GapStats | None]]:
    """Per fault kind, split by whether the fault also took away the controller (when
    recorded): faults applied, how many left a partition short of min ISR, and the worst
    gap of the partitions that kept enough in-sync replicas (what a failover bound covers).
    Only faults whose start recorded the ISR count; empty for sweeps from before that."""
    applied: dict[str, int] = {}
    short: dict[str, int] = {}
    gaps: dict[str, list[float]] = {}
    for r in rows:
        for a in r.summary["availability"]:
            if a.get("short_isr_partitions") is None:
                continue
            label = a["kind"] + (", controller too" if a.get("controller_hit") else "")
            applied[label] = applied.get(label, 0) + 1
            short[label] = short.get(label, 0) + (1 if a["short_isr_partitions"] else 0)
            if a.get("longest_full_isr_gap_s") is not None:
                gaps.setdefault(label, []).append(float(a["longest_full_isr_gap_s"]))
    return [
        (label, applied[label], short[label], GapStats.of(gaps.get(label, [])))
        for label in sorted(applied)
    ]


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def markdown(rows: list[SeedRow]) -> str:
    """The totals, the gaps by fault kind and one row per seed, as Markdown tables."""
    t = totals(rows)
    failing = f" (seeds {', '.join(map(str, t['failing_seeds']))})" if t["failing_seeds"] else ""
    lines = [
        "| seeds | faults | acknowledged writes | unknown | violations "
        "| longest partition gap (s) | longest cluster-wide gap (s) |",
        "|---|---|---|---|---|---|---|",
        f"| {t['seeds']} ({t['first_seed']}-{t['last_seed']}) | {t['faults']} "
        f"| {t['acknowledged']:,} | {t['unknown']} | **{t['violations']}**{failing} "
        f"| {t['longest_partition_gap_s']:.2f} | {t['longest_write_gap_s']:.2f} |",
        "",
        "| fault kind | applied | worst partition's gap: median (s) | p90 (s) | max (s) "
        "| cluster-wide gap: median (s) | max (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind, g in gaps_by_kind(rows).items():
        p = g.partition
        stats = (p.median_s, p.p90_s, p.max_s) if p is not None else (None, None, None)
        worst = " | ".join(_seconds(v) for v in stats)
        lines.append(
            f"| {kind} | {g.applied} | {worst} | {g.cluster.median_s:.2f} | {g.cluster.max_s:.2f} |"
        )
    bounds = bound_rows(rows)
    if bounds:
        lines += [
            "",
            "| fault kind | applied | left a partition short of min ISR "
            "| worst gap of the other partitions: median (s) | p90 (s) | max (s) |",
            "|---|---|---|---|---|---|",
        ]
        for label, count, short, f in bounds:
            stats = (f.median_s, f.p90_s, f.max_s) if f is not None else (None, None, None)
            lines.append(
                f"| {label} | {count} | {short} | {' | '.join(_seconds(v) for v in stats)} |"
            )
    lines += [
        "",
        "| seed | faults | kinds | acknowledged | unknown | longest partition gap (s) "
        "| longest cluster-wide gap (s) | violations |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        applied = r.faults_applied
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(applied.items()))
        w = r.summary["writes"]
        lines.append(
            f"| {r.seed} | {sum(applied.values())} | {kinds} | {w['ok']} | {w['unknown']} "
            f"| {_seconds(partition_gap(r))} | {r.summary['max_write_gap_s']:.2f} "
            f"| {r.violations} |"
        )
    return "\n".join(lines) + "\n"
