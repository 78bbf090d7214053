"""The ``replace-voter`` chaos fault on a real 3-node cluster: a voter (a node, then the
Raft leader) loses its machine and disk and is replaced under a new directory id while the
workload runs and the Raft leader is paused and killed; the run must show no violation, and
the quorum must end with voters 1, 2, 3, each replaced node under its new directory.

About a minute and a half on a quiet 2-core machine: outside the default run, with the
voter-change tests' opt-in (``RILLET_VOTER_TESTS=1``; docs/chaos-elastic.md).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from rillet.chaos.history import HISTORY_FILE, load_history
from rillet.chaos.runner import RunConfig, replay_command, run_once

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("RILLET_VOTER_TESTS") != "1",
        reason="slow: run with RILLET_VOTER_TESTS=1",
    ),
]

# Seed 2's schedule: replace node 1, replace the Raft leader, pause node 2, kill the leader.
CONFIG = RunConfig(
    seed=2,
    duration_s=25,
    faults=("replace-voter", "kill-leader", "pause"),
    windows=(1.0, 3.0),
    gaps=(1.0, 2.5),
)


def test_voters_replaced_during_faults_lose_nothing_and_end_as_intended(tmp_path: Path) -> None:
    result = run_once(replace(CONFIG, out_dir=tmp_path))
    violations = [f"{v.check}: {v.message}" for v in result.violations]
    assert result.ok, f"{violations}\nreplay: {replay_command(result.config)}"
    assert result.summary["writes"]["ok"] > 1000
    history = load_history(result.run_dir / HISTORY_FILE)
    replaced = [f for f in history.faults if f.kind == "replace-voter" and f.skipped is None]
    assert len(replaced) == 2
    for fault in replaced:
        assert fault.detail["remove"]["done"] and fault.detail["add"]["done"]
        assert fault.detail["new_directory"] != fault.detail["old_directory"]
