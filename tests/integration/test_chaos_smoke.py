"""The chaos smoke: a few fixed seeds against real 3-node clusters must show no violation,
and a node with a test-only fault (acks=all answered before the high watermark passes the
batch) must be caught by the same harness.

Each run plans its own cluster under tmp_path; the harness stops every process it started,
also on failure. A failing run's message carries the violations and the replay command;
its directory (history, final state, node logs and data) stays under tmp_path.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import ack_before_hw_node
import pytest

from rillet.chaos.runner import RunConfig, RunResult, replay_command, run_once
from rillet.chaos.schedule import DEFAULT_FAULTS

pytestmark = pytest.mark.integration

# Two seeds whose schedules together use every fault kind (see `rillet chaos schedule`).
SMOKE_SEEDS = (1, 3)
SMOKE = RunConfig(
    duration_s=22,
    faults=DEFAULT_FAULTS,
    windows=(1.0, 3.0),
    gaps=(1.0, 2.5),
    rate=250.0,
)


def explain(result: RunResult) -> str:
    lines = [f"seed {result.config.seed} in {result.run_dir}"]
    lines += [f"  {v.check}: {v.message} {v.details}" for v in result.violations]
    lines.append(f"  replay: {replay_command(result.config)}")
    return "\n".join(lines)


@pytest.mark.parametrize("seed", SMOKE_SEEDS)
def test_fixed_seeds_report_no_violations(seed: int, tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_once(replace(SMOKE, seed=seed, out_dir=tmp_path))
    print(f"seed {seed}: {time.monotonic() - started:.1f} s, {result.summary['writes']}")
    assert result.ok, explain(result)
    s = result.summary
    assert s["writes"]["ok"] > 1000
    assert sum(n for kind, n in s["faults"].items() if "skipped" not in kind) >= 3
    assert s["final"]["received_by_members"] >= s["writes"]["ok"]
    assert s["group_samples"] > 10
    assert (result.run_dir / "timeline.png").read_bytes()[:4] == b"\x89PNG"
    saved = json.loads((result.run_dir / "summary.json").read_text())
    assert saved["verdict"] == "ok" and saved["replay"] == replay_command(result.config)
    assert not (result.run_dir / "cluster").exists()  # a clean run's node data is removed


def test_a_seed_driven_through_kafka_clients_reports_no_violations(tmp_path: Path) -> None:
    """``--client kafka``: confluent-kafka idempotent acks=all producers and classic-group
    consumers (member processes) through the nodes' Kafka listeners, seed 1's leader and
    node kills; the same checks, and the group samples name their partitions."""
    result = run_once(replace(SMOKE, seed=1, client="kafka", out_dir=tmp_path))
    assert result.ok, explain(result)
    s = result.summary
    assert s["config"]["client"] == "kafka"
    assert s["writes"]["ok"] > 1000
    assert s["final"]["received_by_members"] >= s["writes"]["ok"]
    assert s["group_samples"] > 10
    history = (result.run_dir / "history.jsonl").read_text().splitlines()
    samples = [json.loads(line) for line in history if '"type":"group"' in line]
    owned = [p for sample in samples for ps in sample["owned"].values() for p in ps]
    assert set(owned) == set(range(SMOKE.partitions))  # assignments decoded, not empty
    assert "replay: rillet chaos run" in explain(result) and "--client kafka" in explain(result)


def test_the_checker_catches_a_node_that_acks_before_the_high_watermark(
    tmp_path: Path,
) -> None:
    """Nodes run by the test-only entry point tests/support/ack_before_hw_node.py (the
    fault is honoured by the produce handler only) answer acks=all right after their own
    append. Killing
    partition leaders then loses acknowledged records, and the checker must say so.
    Frequent kills under a high write rate make at least one kill land while a leader holds
    acknowledged records its followers have not fetched yet; the same configuration without
    the fault is clean."""
    config = RunConfig(
        seed=1,
        duration_s=25,
        faults=("kill-partition-leader",),
        partitions=3,
        rate=1000.0,
        members=1,
        windows=(0.5, 1.5),
        gaps=(0.5, 1.5),
        out_dir=tmp_path,
    )
    result = run_once(config, node_wrap=ack_before_hw_node.wrap)
    found = {v.check for v in result.violations}
    assert "acknowledged-lost" in found, explain(result)
    assert result.summary["verdict"] == "violations"
    assert (result.run_dir / "cluster").exists()  # kept for the post-mortem
