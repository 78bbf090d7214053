"""Every command of docs/getting-started.md runs, in order, against the installed ``rillet``.

The tutorial promises a reader that its commands work from top to bottom. This test runs
its ``sh`` blocks as one shell script (so exported variables carry over, as in the reader's
terminal) in an empty directory, skipping blocks marked ``<!-- illustration -->`` (the
install, and the Spark job, which takes about 45 s and is tested in test_spark.py). The
cluster it starts is stopped at the end, also when a block fails or the deadline passes.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_page import shell_blocks

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "getting-started.md"
DEADLINE_S = 120
CLUSTER_DIR = "rillet-cluster"  # the --data-dir the tutorial's `cluster up` uses


def _script() -> str:
    """The page's runnable blocks as one script that says which block it is in."""
    parts = ["set -euo pipefail"]
    for block in shell_blocks(PAGE.read_text()):
        if not block.illustration:
            where = f"docs/getting-started.md line {block.line}"
            parts.append(f"echo {shlex.quote('### ' + where)} >&2")
            parts.append(block.text)
    return "\n".join(parts) + "\n"


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RILLET_")}
    bin_dir = str(Path(sys.executable).parent)  # the venv's `rillet` and `python`
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    return env


def _stop_cluster(directory: Path, env: dict[str, str]) -> None:
    if (directory / CLUSTER_DIR / "cluster.json").exists():
        subprocess.run(
            ["rillet", "cluster", "down", "--data-dir", CLUSTER_DIR],
            cwd=directory,
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )


def test_the_runnable_blocks_include_cluster_up_a_group_and_cluster_down() -> None:
    script = _script()
    steps = ("rillet cluster up", "GroupConsumer", "rillet cluster status", "rillet cluster down")
    for step in steps:
        assert step in script
    assert "pip install" not in script  # the install is an illustration


def test_every_command_block_of_getting_started_runs(tmp_path: Path) -> None:
    env = _environment()
    (tmp_path / "tutorial.sh").write_text(_script())
    process = subprocess.Popen(
        ["bash", "tutorial.sh"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its background jobs can be killed with it
    )
    try:
        output, _ = process.communicate(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"the tutorial did not finish within {DEADLINE_S} s:\n{output}")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        _stop_cluster(tmp_path, env)
    assert process.returncode == 0, f"a block failed (the last ### line names it):\n{output}"
    assert "group billing read all 100 records" in output
    assert "stopped 3 node(s)" in output
