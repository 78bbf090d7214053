"""The transactional chaos workload against real 3-node clusters (opt-in:
``RILLET_TXN_CHAOS_TESTS=1``; each run takes about a minute, beyond the default run's
budget). A seed under leader, controller and partition-leader kills, pauses and network
partitions shows no anomaly; nodes run with a test-only transaction fault
(tests/support/txn_fault_node.py) are caught by the same checker.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import txn_fault_node

from rillet.chaos.kafka_clients import unavailable_reason
from rillet.chaos.runner import RunConfig
from rillet.chaos.txn_runner import TxnRunResult, run_txn_once

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("RILLET_TXN_CHAOS_TESTS") != "1",
        reason="opt-in: RILLET_TXN_CHAOS_TESTS=1 (a minute per run)",
    ),
    pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason())),
]

FAULTS = ("kill-leader", "kill-partition-leader", "pause", "partition")


def config(tmp_path: Path, seed: int, faults: tuple[str, ...] = FAULTS) -> RunConfig:
    return RunConfig(
        seed=seed,
        duration_s=15,
        faults=faults,
        partitions=3,
        producers=2,
        members=1,
        client="kafka",
        out_dir=tmp_path,
    )


def explain(result: TxnRunResult) -> str:
    lines = [f"seed {result.config.seed} in {result.run_dir}"]
    lines += [f"  {v.check}: {v.message} {v.examples[:3]}" for v in result.violations]
    return "\n".join(lines)


def test_a_transactional_seed_under_faults_shows_no_anomaly(tmp_path: Path) -> None:
    result = run_txn_once(config(tmp_path, seed=1))
    assert result.ok, explain(result)
    s = result.summary
    assert s["transactions"].get("commit", 0) > 50
    assert s["transactions"].get("abort", 0) > 5
    assert s["ctp_transactions"].get("commit", 0) > 5
    assert sum(s["faults"].values()) >= 1


def test_read_committed_past_the_lso_is_caught(tmp_path: Path) -> None:
    """Nodes whose read_committed fetches run to the high watermark: the live reader sees
    records of open transactions, some of which are then aborted."""
    result = run_txn_once(
        config(tmp_path, seed=2, faults=("pause",)), txn_fault_node.wrap_read_past_lso
    )
    found = {v.check for v in result.violations}
    assert found & {"uncommitted-read", "aborted-read"}, explain(result)


def test_skipped_abort_markers_are_caught(tmp_path: Path) -> None:
    """Nodes that never write abort markers: the aborted records stay in an open
    transaction the producer's next commit closes (aborted reads), and a last open one holds
    the last stable offset back (committed writes missing)."""
    result = run_txn_once(
        config(tmp_path, seed=3, faults=("pause",)), txn_fault_node.wrap_skip_abort_markers
    )
    found = {v.check for v in result.violations}
    assert found & {"aborted-read", "lost-write"}, explain(result)
