"""pysyncobj unpickles what reaches its port: a node refuses to expose it without a secret."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rillet.broker.config import load_config
from rillet.broker.errors import ConfigError
from rillet.broker.quorum_setup import resolve_voters


@pytest.fixture(autouse=True)
def _no_secret_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RILLET_CLUSTER_SECRET", raising=False)


def _config(tmp_path: Path, raft_host: str, secret: str = "") -> Path:
    path = tmp_path / "node.toml"
    secret_line = f'secret = "{secret}"\n' if secret else ""
    path.write_text(
        f'data_dir = "{tmp_path / "data"}"\n'
        f'[quorum]\nengine = "pysyncobj"\nraft_host = "{raft_host}"\n{secret_line}'
    )
    return path


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "::", "raft.example"])
def test_pysyncobj_off_loopback_without_a_secret_is_refused(tmp_path: Path, host: str) -> None:
    with pytest.raises(ConfigError, match="unpickle"):
        resolve_voters(load_config(_config(tmp_path, host)), 9092)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost"])
def test_pysyncobj_on_loopback_needs_no_secret(tmp_path: Path, host: str) -> None:
    assert resolve_voters(load_config(_config(tmp_path, host)), 9092).is_voter(1)


def test_pysyncobj_off_loopback_with_a_secret_starts(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, "0.0.0.0", secret="a-secret-of-sixteen-chars"))
    assert resolve_voters(cfg, 9092).is_voter(1)


def test_the_node_command_exits_2_with_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rillet.cli.main",
            "node",
            "--config",
            str(_config(tmp_path, "0.0.0.0")),
            "--port",
            "0",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if " ERROR " in line]
    assert len(errors) == 1 and "unpickle" in errors[0] and "Traceback" not in done.stderr
