"""``rillet scrub`` on a stopped node's data directory (read-only) and its refusals."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from rillet.broker.node import LOCK_FILE
from rillet.cli.main import main
from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import build_batch

T0 = 1_700_000_000_000


def _node_data(data_dir: Path) -> Path:
    """A stopped node's data directory with one partition of several segments; returns the
    path of a sealed segment."""
    log = PartitionLog.open(
        data_dir / "events-0", LogConfig(segment_bytes=1024), T0, "events", 0, "id-1"
    )
    for i in range(40):
        log.append_as_leader(build_batch([(T0, None, b"%02d" % i + bytes(60), None)]), 0, T0)
    sealed = log.segments()[1].log_path
    log.close()
    return sealed


def test_a_clean_stopped_node_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _node_data(tmp_path)
    assert main(["scrub", "--data-dir", str(tmp_path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["partitions"] == 1 and result["segments_checked"] >= 3
    assert result["damaged"] == []


def test_damage_in_a_stopped_node_is_listed_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sealed = _node_data(tmp_path)
    with sealed.open("r+b") as f:
        f.seek(sealed.stat().st_size // 2 + 20)
        f.write(b"\xff" * 8)
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "events-0").iterdir()}
    assert main(["scrub", "--data-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"DAMAGED events-0: {sealed} position" in out
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "events-0").iterdir()} == before


def test_a_node_holding_the_lock_without_a_pid_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _node_data(tmp_path)
    fd = os.open(tmp_path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert main(["scrub", "--data-dir", str(tmp_path)]) == 1
    finally:
        os.close(fd)
    assert "did not record its pid" in capsys.readouterr().err


def test_a_missing_directory_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scrub", "--data-dir", str(tmp_path / "nope")]) == 1
    assert capsys.readouterr().err.startswith("error: ")
