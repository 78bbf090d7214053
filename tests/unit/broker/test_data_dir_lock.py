"""The node's data directory lock also keeps the directory its owner's: the Raft log in it
carries users' SCRAM salts and keys."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from rillet.broker.node import LOCK_FILE, DataDirLock


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_data_dir_is_0700_and_its_lock_0600(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    lock = DataDirLock(data)
    try:
        assert mode(data) == 0o700 and mode(data / LOCK_FILE) == 0o600
        assert "open to other users" not in caplog.text
    finally:
        lock.release()


def test_an_open_data_dir_is_narrowed_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    raft = data / "__raft" / "raft"
    raft.mkdir(parents=True)
    for d in (data, data / "__raft", raft):
        d.chmod(0o755)
    (raft / "hard-state").write_text("term")
    (raft / "hard-state").chmod(0o644)
    caplog.set_level(logging.WARNING)
    lock = DataDirLock(data)
    try:
        assert [mode(p) for p in (data, data / "__raft", raft)] == [0o700] * 3
        assert mode(raft / "hard-state") == 0o600
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1 and "4 files and directories" in warnings[0], warnings
    finally:
        lock.release()
