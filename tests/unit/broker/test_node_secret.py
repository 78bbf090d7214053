"""A node always runs with a cluster secret nobody else can compute: configured, or made by
the only voter and kept in its data directory; never the empty string."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.cluster.node_handshake import handshake_key
from rillet.broker.cluster.node_secret import (
    GENERATED_SECRET_FILE,
    node_secret,
    read_or_create_secret,
)
from rillet.broker.config import NodeConfig, load_config
from rillet.broker.config.quorum_config import QuorumConfig, VoterConfig
from rillet.broker.errors import ConfigError
from rillet.raft.errors import MissingSecret
from rillet.raft.peer_mac import derive_key
from rillet.raft.pysyncobj_engine import PysyncobjQuorum

CONFIGURED = "a-configured-secret-of-16+"


@pytest.fixture(autouse=True)
def _no_secret_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RILLET_CLUSTER_SECRET", raising=False)


def test_a_lone_voter_without_a_secret_makes_one_kept_private_in_its_data_dir(
    tmp_path: Path,
) -> None:
    secret = node_secret(QuorumConfig(), 1, tmp_path)
    path = tmp_path / GENERATED_SECRET_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip() == secret and len(secret) >= 32
    assert os.listdir(tmp_path) == [GENERATED_SECRET_FILE]  # no temporary file left
    # A restart reads the same secret; another data directory makes another one.
    assert node_secret(QuorumConfig(), 1, tmp_path) == secret
    (tmp_path / "other").mkdir()
    assert node_secret(QuorumConfig(), 1, tmp_path / "other") != secret


def test_the_generated_secret_is_made_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        read_or_create_secret(tmp_path / GENERATED_SECRET_FILE)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / GENERATED_SECRET_FILE).stat().st_mode) == 0o600


def test_a_configured_secret_wins_and_nothing_is_written(tmp_path: Path) -> None:
    assert node_secret(QuorumConfig(secret=CONFIGURED), 1, tmp_path) == CONFIGURED
    assert not (tmp_path / GENERATED_SECRET_FILE).exists()


def test_a_single_voter_named_in_the_config_may_make_its_own(tmp_path: Path) -> None:
    quorum = QuorumConfig(voters=(VoterConfig(3, "127.0.0.1:9103", "127.0.0.1:9003"),))
    assert node_secret(quorum, 3, tmp_path)


def test_a_broker_only_node_needs_the_voters_secret(tmp_path: Path) -> None:
    quorum = QuorumConfig(voters=(VoterConfig(1, "127.0.0.1:9101", "127.0.0.1:9001"),))
    with pytest.raises(ConfigError, match="broker-only node 2 needs a cluster secret"):
        node_secret(quorum, 2, tmp_path)
    assert not (tmp_path / GENERATED_SECRET_FILE).exists()


def test_a_kept_secret_others_may_read_or_a_damaged_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / GENERATED_SECRET_FILE
    read_or_create_secret(path)
    path.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        node_secret(QuorumConfig(), 1, tmp_path)
    path.write_text("")
    path.chmod(0o600)
    with pytest.raises(ConfigError, match="no usable cluster secret"):
        node_secret(QuorumConfig(), 1, tmp_path)


def test_no_key_is_ever_derived_from_the_empty_secret() -> None:
    with pytest.raises(MissingSecret):
        derive_key("", b"any purpose")
    with pytest.raises(MissingSecret):
        handshake_key("")
    with pytest.raises(MissingSecret):
        ClusterAuth("rillet-local", "")
    assert ClusterAuth("rillet-local", CONFIGURED).token  # a real secret gives a real token


@pytest.mark.parametrize("voters", [{1: "127.0.0.1:1"}, {1: "127.0.0.1:1", 2: "127.0.0.1:2"}])
def test_pysyncobj_never_runs_without_a_secret(tmp_path: Path, voters: dict[int, str]) -> None:
    async def main() -> None:
        with pytest.raises(MissingSecret, match="unpickles"):
            PysyncobjQuorum(1, voters, tmp_path, "", trio.lowlevel.current_trio_token())

    trio.run(main)


def test_a_pysyncobj_node_without_a_configured_secret_gets_a_generated_one(
    tmp_path: Path,
) -> None:
    """What Node.run hands build_quorum: on loopback or not, never an empty secret."""
    for host in ("127.0.0.1", "0.0.0.0"):
        cfg = NodeConfig(data_dir=tmp_path, quorum=QuorumConfig(engine="pysyncobj", raft_host=host))
        assert node_secret(cfg.quorum, cfg.node_id, cfg.data_dir)


def test_the_node_command_refuses_a_broker_only_node_without_a_secret_in_one_line(
    tmp_path: Path,
) -> None:
    config = tmp_path / "node.toml"
    config.write_text(
        f'node_id = 2\ndata_dir = "{tmp_path / "data"}"\n[quorum]\n'
        'voters = [{ id = 1, raft = "127.0.0.1:9101", listener = "127.0.0.1:9001" }]\n'
    )
    load_config(config)  # the config itself is valid: only the secret is missing
    done = subprocess.run(
        [sys.executable, "-m", "rillet.cli.main", "node", "--config", str(config), "--port", "0"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if " ERROR " in line]
    assert len(errors) == 1 and "needs a cluster secret" in errors[0], done.stderr
    assert "Traceback" not in done.stderr
