"""``rillet chaos report``: a sweep's totals and tables come back from its run folders."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from rillet.chaos.errors import ChaosError
from rillet.chaos.sweep_report import bound_rows, gaps_by_kind, load_sweep, markdown, totals
from rillet.cli import chaos_command


def chaos_command_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rillet")
    chaos_command.register(p.add_subparsers(dest="command", required=True))
    return p


def summary(
    ok: int, gaps: list[tuple[str, float]], violations: int = 0, partition_factor: float = 4.0
) -> dict[str, Any]:
    """A run's summary; each fault's worst partition stalled ``partition_factor`` times as
    long as the whole cluster did (a partition leader's fault stalls its partitions only)."""
    faults: dict[str, int] = {}
    for kind, _ in gaps:
        faults[kind] = faults.get(kind, 0) + 1
    faults["pause (skipped)"] = 1  # not applied: never counted
    return {
        "violations": [{"check": "acknowledged-lost"}] * violations,
        "writes": {"ok": ok, "unknown": 1},
        "faults": faults,
        "availability": [
            {
                "kind": k,
                "longest_write_gap_s": g,
                "longest_partition_gap_s": g * partition_factor,
                "partition": 1,
            }
            for k, g in gaps
        ],
        "max_write_gap_s": max(g for _, g in gaps),
        "max_partition_gap_s": max(g * partition_factor for _, g in gaps),
    }


def write_sweep(out: Path, summaries: dict[int, dict[str, Any]]) -> None:
    for seed, s in summaries.items():
        (out / f"seed-{seed}").mkdir(parents=True)
        (out / f"seed-{seed}" / "summary.json").write_text(json.dumps(s))
    (out / "seed-99").mkdir()  # a run that never finished: no summary yet
    (out / "notes").mkdir()


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    write_sweep(
        tmp_path,
        {
            10: summary(100, [("pause", 3.0), ("kill-any", 0.5)]),
            2: summary(200, [("pause", 1.0), ("pause", 2.0), ("kill-any", 0.25)], violations=1),
        },
    )
    return tmp_path


def test_runs_load_by_seed_and_add_up(sweep: Path) -> None:
    rows = load_sweep(sweep)
    assert [r.seed for r in rows] == [2, 10]
    t = totals(rows)
    assert (t["seeds"], t["faults"], t["acknowledged"], t["unknown"]) == (2, 5, 300, 2)
    assert (t["violations"], t["failing_seeds"], t["longest_write_gap_s"]) == (1, [2], 3.0)
    assert t["longest_partition_gap_s"] == 12.0
    gaps = gaps_by_kind(rows)
    assert list(gaps) == ["kill-any", "pause"]
    pause = gaps["pause"]
    assert pause.partition is not None
    assert (pause.applied, pause.partition.median_s, pause.partition.max_s) == (3, 8.0, 12.0)
    assert (pause.cluster.median_s, pause.cluster.max_s) == (2.0, 3.0)


def test_markdown_has_the_totals_the_kinds_and_a_row_per_seed(sweep: Path) -> None:
    text = markdown(load_sweep(sweep))
    assert "| 2 (2-10) | 5 | 300 | 2 | **1** (seeds 2) | 12.00 | 3.00 |" in text
    assert "| pause | 3 | 8.00 | 12.00 | 12.00 | 2.00 | 3.00 |" in text
    assert "| 2 | 3 | kill-any 1, pause 2 | 200 | 1 | 8.00 | 2.00 | 1 |" in text


def test_the_kinds_table_ranks_by_the_worst_partition_not_the_cluster(tmp_path: Path) -> None:
    """A pause that stalls only its leader's partitions: the cluster-wide gap stays small,
    the worst partition's gap is what the table's first columns show."""
    write_sweep(tmp_path, {1: summary(100, [("pause", 0.1)] * 3, partition_factor=150.0)})
    g = gaps_by_kind(load_sweep(tmp_path))["pause"]
    assert g.partition is not None and g.partition.max_s == pytest.approx(15.0)
    assert g.cluster.max_s == pytest.approx(0.1)


def test_summaries_from_before_the_partition_measurement_still_report(tmp_path: Path) -> None:
    old = summary(100, [("kill-any", 0.5)])
    for a in old["availability"]:
        del a["longest_partition_gap_s"], a["partition"]
    del old["max_partition_gap_s"]
    write_sweep(tmp_path, {1: old})
    rows = load_sweep(tmp_path)
    g = gaps_by_kind(rows)["kill-any"]
    assert g.partition is None and g.cluster.max_s == 0.5
    text = markdown(rows)
    assert "| kill-any | 1 | n/a | n/a | n/a | 0.50 | 0.50 |" in text
    assert "| 1 | 1 | kill-any 1 | 100 | 1 | n/a | 0.50 | 0 |" in text


def test_the_command_exits_1_on_violations_and_2_without_runs(
    sweep: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = chaos_command_parser()
    assert chaos_command.run_report(p.parse_args(["chaos", "report", str(sweep)])) == 1
    out = capsys.readouterr().out
    assert "2 seed(s) (2-10)" in out and "seeds with violations: 2" in out and "pause" in out
    empty = tmp_path / "empty"
    empty.mkdir()
    assert chaos_command.run_report(p.parse_args(["chaos", "report", str(empty)])) == 2
    with pytest.raises(ChaosError):
        load_sweep(empty)
    markdown_args = p.parse_args(["chaos", "report", str(sweep), "--markdown"])
    assert chaos_command.run_report(markdown_args) == 1


def test_a_summary_being_written_or_from_another_format_is_skipped(
    sweep: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (sweep / "seed-5").mkdir()
    (sweep / "seed-5" / "summary.json").write_text('{"violations": [')  # half written
    (sweep / "seed-6").mkdir()
    (sweep / "seed-6" / "summary.json").write_text('{"writes": {}}')
    assert [r.seed for r in load_sweep(sweep)] == [2, 10]
    err = capsys.readouterr().err
    assert "seed-5" in err and "seed-6" in err and "no violations" in err


def test_faults_that_left_a_partition_short_of_min_isr_are_reported_apart(tmp_path: Path) -> None:
    run = summary(100, [("pause", 1.0), ("pause", 1.0), ("kill-any", 0.5)])
    pause_short, pause_full, kill = run["availability"]
    pause_short.update(short_isr_partitions=[1], longest_full_isr_gap_s=3.2)
    pause_full.update(short_isr_partitions=[], longest_full_isr_gap_s=2.9)
    kill.update(short_isr_partitions=None, longest_full_isr_gap_s=None)  # no ISR recorded
    run["availability"].append(
        {
            "kind": "pause",
            "longest_write_gap_s": 1.0,
            "longest_partition_gap_s": 5.0,
            "partition": 0,
            "short_isr_partitions": [],
            "longest_full_isr_gap_s": 5.0,
            "controller_hit": True,
        }
    )
    write_sweep(tmp_path, {1: run})
    rows = load_sweep(tmp_path)
    pause_rows = [b for b in bound_rows(rows) if b[0].startswith("pause")]
    assert sum(short for _, _, short, _ in pause_rows) == 1
    assert max(f.max_s for _, _, _, f in pause_rows if f is not None) == pytest.approx(5.0)
    text = markdown(rows)
    assert "| pause | 2 | 1 | 3.05 | 3.20 | 3.20 |" in text
    assert "| pause, controller too | 1 | 0 | 5.00 | 5.00 | 5.00 |" in text
    assert "| kill-any |" not in text.split("left a partition short")[1]  # no ISR recorded
