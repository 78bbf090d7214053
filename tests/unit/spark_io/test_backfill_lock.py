"""One backfill per output folder, refused at once and naming the holder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rillet.spark_io.backfill_output import ensure_free, locked
from rillet.spark_io.errors import BackfillError


def test_a_second_run_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    out = tmp_path / "dataset"
    ensure_free(out)  # no folder yet: free
    with locked(out):
        with pytest.raises(
            BackfillError, match=rf"another backfill is running on .*pid {os.getpid()}"
        ):
            ensure_free(out)
        with pytest.raises(BackfillError, match="another backfill"), locked(out):
            pass
    ensure_free(out)  # released
    with locked(out):
        pass  # and taken again


def test_the_cli_refuses_before_starting_spark(tmp_path: Path) -> None:
    out = tmp_path / "dataset"
    with locked(out):
        done = subprocess.run(
            [sys.executable, "-m", "rillet.cli.main", "spark", "backfill",
             "--bootstrap", "127.0.0.1:1", "--topic", "t", "--group", "g", "--output", str(out)],
            check=False, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr  # one line, and no Spark start-up output before it
    assert "another backfill is running" in lines[0] and f"pid {os.getpid()}" in lines[0]


def test_the_progress_bar_is_for_a_terminal_only() -> None:
    from rillet.spark_io.backfill_cli import session_conf

    bar = {"spark.ui.showConsoleProgress": "true"}
    assert session_conf([], no_progress=False, stderr_is_tty=True) == bar
    assert session_conf([], no_progress=True, stderr_is_tty=True) == {}
    assert session_conf([], no_progress=False, stderr_is_tty=False) == {}
    given = [("spark.ui.showConsoleProgress", "false"), ("spark.executor.cores", "2")]
    assert session_conf(given, no_progress=False, stderr_is_tty=True) == dict(given)
