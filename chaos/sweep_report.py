"""What a sweep of many seeds showed, from the ``summary.json`` each run left behind.

A sweep runs for hours; its result is the directory of run folders, not the process that
made them. Reading the summaries back (instead of keeping totals in the sweeping process)
lets a sweep that was stopped, split in parts or re-judged be reported the same way, and
lets docs/chaos.md's tables be produced again with one command from the files.
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
    }


def gaps_by_kind(rows: list[SeedRow]) -> dict[str, GapStats]:
    """The longest write gaps charged to each applied fault, pooled by fault kind."""
    gaps: dict[str, list[float]] = {}
    for r in rows:
        for a in r.summary["availability"]:
            gaps.setdefault(a["kind"], []).append(a["longest_write_gap_s"])
    out = {}
    for kind, values in sorted(gaps.items()):
        values.sort()
        p90 = percentile(values, 0.9)
        assert p90 is not None  # a kind is only listed with a gap
        out[kind] = GapStats(len(values), statistics.median(values), p90, values[-1])
    return out


def markdown(rows: list[SeedRow]) -> str:
    """The totals, the write gaps by fault kind and one row per seed, as Markdown tables."""
    t = totals(rows)
    failing = f" (seeds {', '.join(map(str, t['failing_seeds']))})" if t["failing_seeds"] else ""
    lines = [
        "| seeds | faults | acknowledged writes | unknown | violations | longest write gap (s) |",
        "|---|---|---|---|---|---|",
        f"| {t['seeds']} ({t['first_seed']}-{t['last_seed']}) | {t['faults']} "
        f"| {t['acknowledged']:,} | {t['unknown']} | **{t['violations']}**{failing} "
        f"| {t['longest_write_gap_s']:.2f} |",
        "",
        "| fault kind | applied | median (s) | p90 (s) | max (s) |",
        "|---|---|---|---|---|",
    ]
    for kind, g in gaps_by_kind(rows).items():
        lines.append(f"| {kind} | {g.applied} | {g.median_s:.2f} | {g.p90_s:.2f} | {g.max_s:.2f} |")
    lines += [
        "",
        "| seed | faults | kinds | acknowledged | unknown | longest write gap (s) | violations |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        applied = r.faults_applied
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(applied.items()))
        w = r.summary["writes"]
        lines.append(
            f"| {r.seed} | {sum(applied.values())} | {kinds} | {w['ok']} | {w['unknown']} "
            f"| {r.summary['max_write_gap_s']:.2f} | {r.violations} |"
        )
    return "\n".join(lines) + "\n"
