"""Node TOML config and per-topic overrides: defaults, overrides, and clear refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from rillet.broker.cluster.node_secret import GENERATED_SECRET_FILE, node_secret
from rillet.broker.cluster.quorum_setup import resolve_voters
from rillet.broker.config import NodeConfig, load_config
from rillet.broker.config.quorum_config import QuorumConfig, VoterConfig
from rillet.broker.errors import ConfigError, TopicError
from rillet.broker.replica.topic_config import (
    effective_log_config,
    validate_topic_configs,
    validate_topic_name,
)
from rillet.partition_store.config import LogConfig
from rillet.wire.error_codes import ErrorCode


def test_no_file_gives_documented_defaults() -> None:
    cfg = load_config(None)
    assert cfg == NodeConfig()
    assert cfg.listener.port == 9092
    assert cfg.log.segment_bytes == 1 << 30
    assert cfg.log.flush_messages == -1


def test_file_and_overrides(tmp_path: Path) -> None:
    f = tmp_path / "n.toml"
    f.write_text(
        'node_id = 3\ndata_dir = "/tmp/x"\n[listener]\nport = 1234\n'
        "[log]\nsegment_bytes = 1048576\nretention_ms = -1\n"
    )
    cfg = load_config(f, {"listener.port": 0, "listener.host": None})
    assert cfg.node_id == 3
    assert cfg.data_dir == Path("/tmp/x")
    assert cfg.listener.port == 0
    assert cfg.listener.host == "127.0.0.1"
    assert cfg.log.segment_bytes == 1 << 20
    assert cfg.log.retention_ms == -1


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("nod_id = 1\n", "unknown config key(s): nod_id"),
        ("[listener]\nprt = 1\n", "listener.prt"),
        ("node_id = 'one'\n", "node_id must be an integer"),
        ("[topics]\nauto_create_topics_enable = 1\n", "must be true or false"),
        ("[topics]\nnum_partitions = 20\nmax_partitions_per_topic = 10\n", "exceeds max_parti"),
        ("listener = 3\n", "listener must be a table"),
        ("node_id = \n", "not valid TOML"),
        ("[groups]\ninitial_rebalance_delay_ms = -1\n", "initial_rebalance_delay_ms"),
        ("[groups]\nmin_session_timeout_ms = 9\nmax_session_timeout_ms = 8\n", "min_session"),
        ("[groups]\nmax_size = 0\n", "max_size must be >= 1"),
        ("[topics]\nreplication_factor = 3\n", "is now topics.default_replication_factor"),
        ("[groups]\nconsumer_session_timeout_ms = 10\n", "consumer_session_timeout_ms must"),
        ("[groups]\nconsumer_max_size = 0\n", "consumer_max_size must be >= 1"),
        ("[quorum]\nraft_max_connections = 1\n", "raft_max_connections must leave"),
        ("[quorum]\nraft_max_connections_per_ip = 0\n", "raft_max_connections_per_ip must"),
        ("[quorum]\nraft_max_connections_per_ip = 40\n", "raft_max_connections_per_ip must"),
        ("[quorum]\nraft_handshake_timeout_ms = 0\n", "raft_handshake_timeout_ms must"),
        ("[sasl]\nfailed_authentication_delay_ms = -1\n", "sasl.failed_authentication_delay"),
        ("[sasl]\nfailed_authentication_delay_max_ms = 50\n", "delay_max_ms must be >="),
        ("[sasl]\nfailed_authentication_tracked_max = 0\n", "tracked_max must be >= 1"),
        ("[sasl]\npassword_check_threads = 0\n", "password_check_threads must be >= 1"),
        ("[tasks]\nlog_cleaner_worker = 'fork'\n", 'log_cleaner_worker must be "process" or'),
        ("[tasks]\nlog_cleaner_process_niceness = 20\n", "log_cleaner_process_niceness must be 0"),
        ("[tasks]\nlog_cleaner_process_niceness = -1\n", "log_cleaner_process_niceness must be"),
    ],
)
def test_bad_config_is_refused_by_name(tmp_path: Path, text: str, needle: str) -> None:
    f = tmp_path / "n.toml"
    f.write_text(text)
    with pytest.raises(ConfigError, match=None) as info:
        load_config(f)
    assert needle in str(info.value)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_config(tmp_path / "absent.toml")


def test_topic_overrides_apply_on_node_defaults() -> None:
    defaults = LogConfig()
    configs = validate_topic_configs({"retention.ms": "1000", "cleanup.policy": "delete"}, defaults)
    effective = effective_log_config(defaults, configs)
    assert effective.retention_ms == 1000
    assert effective.segment_bytes == defaults.segment_bytes


@pytest.mark.parametrize(
    ("policy", "normalised"),
    [("compact", "compact"), ("delete, compact", "compact,delete"), ("compact,delete", None)],
)
def test_compaction_settings_are_accepted_and_normalised(
    policy: str, normalised: str | None
) -> None:
    configs = validate_topic_configs(
        {"cleanup.policy": policy, "min.cleanable.dirty.ratio": "0.1", "delete.retention.ms": "5"},
        LogConfig(),
    )
    assert configs["cleanup.policy"] == (normalised or policy)
    effective = effective_log_config(LogConfig(), configs)
    assert effective.compacted and effective.min_cleanable_dirty_ratio == 0.1
    assert effective.delete_retention_ms == 5


@pytest.mark.parametrize(
    "configs",
    [
        {"retention.msx": "1"},
        {"retention.ms": "soon"},
        {"cleanup.policy": "archive"},
        {"min.cleanable.dirty.ratio": "1.5"},
        {"min.cleanable.dirty.ratio": "half"},
    ],
)
def test_bad_topic_configs_are_invalid_config(configs: dict[str, str]) -> None:
    with pytest.raises(TopicError) as info:
        validate_topic_configs(configs, LogConfig())
    assert info.value.code == ErrorCode.INVALID_CONFIG


@pytest.mark.parametrize("name", ["", ".", "..", "a" * 250, "bad name", "slash/y", "ü"])
def test_illegal_topic_names(name: str) -> None:
    with pytest.raises(TopicError) as info:
        validate_topic_name(name)
    assert info.value.code == ErrorCode.INVALID_TOPIC


def _three_voters(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "node.toml"
    path.write_text(
        """
node_id = 2
[listener]
port = 9002
[quorum]
secret = "0123456789abcdef-secret"
voters = [
  { id = 1, raft = "127.0.0.1:9101", listener = "127.0.0.1:9001" },
  { id = 2, raft = "127.0.0.1:9102", listener = "127.0.0.1:9002" },
  { id = 3, raft = "127.0.0.1:9103", listener = "127.0.0.1:9003" },
]
"""
        + extra
    )
    return path


def test_quorum_voters_are_read_as_a_list_of_tables(tmp_path: Path) -> None:
    cfg = load_config(_three_voters(tmp_path))
    assert cfg.quorum.voters[1] == VoterConfig(2, "127.0.0.1:9102", "127.0.0.1:9002")
    voters = resolve_voters(cfg, 9002)
    assert voters.is_voter(2) and voters.raft[3] == "127.0.0.1:9103"
    assert voters.listeners == {
        1: ("127.0.0.1", 9001),
        2: ("127.0.0.1", 9002),
        3: ("127.0.0.1", 9003),
    }


def test_a_node_outside_the_voters_is_broker_only(tmp_path: Path) -> None:
    cfg = load_config(_three_voters(tmp_path), {"node_id": 7, "listener.port": 9007})
    assert not resolve_voters(cfg, 9007).is_voter(7)


def test_no_voters_means_a_cluster_of_one() -> None:
    voters = resolve_voters(NodeConfig(), 9092)
    assert voters.is_voter(1) and voters.listeners == {1: ("127.0.0.1", 9092)}


def test_a_voter_must_listen_where_the_voters_say(tmp_path: Path) -> None:
    cfg = load_config(_three_voters(tmp_path))
    with pytest.raises(ConfigError, match=r"listener\.port"):
        resolve_voters(cfg, 9555)


def test_multi_voter_quorum_refuses_to_start_without_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RILLET_CLUSTER_SECRET", raising=False)
    cfg = load_config(_three_voters(tmp_path), {"quorum.secret": ""})
    with pytest.raises(ConfigError, match="multi-node quorum needs a cluster secret"):
        node_secret(cfg.quorum, cfg.node_id, tmp_path)
    assert not (tmp_path / GENERATED_SECRET_FILE).exists()  # no secret of its own either


def test_secret_file_and_short_secrets(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("a-long-enough-cluster-secret\n")
    assert QuorumConfig(secret_file=str(tmp_path / "secret")).load_secret() == (
        "a-long-enough-cluster-secret"
    )
    with pytest.raises(ConfigError, match="at least"):
        QuorumConfig(secret="short").load_secret()


@pytest.mark.parametrize(
    "extra",
    [
        'engine = "zookeeper"\n',
        "election_timeout_min_ms = 2500\n",  # not below the max (2000)
        "broker_heartbeat_interval_ms = 10000\n",
        "raft_max_connections = 2\n",  # no room for two peers and a handshake
    ],
)
def test_bad_quorum_settings_are_refused(tmp_path: Path, extra: str) -> None:
    with pytest.raises(ConfigError):
        load_config(_three_voters(tmp_path, extra))


def test_duplicate_voter_ids_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "n.toml"
    path.write_text(
        '[quorum]\nvoters = [{ id = 1, raft = "h:1", listener = "h:2" },'
        ' { id = 1, raft = "h:3", listener = "h:4" }]\n'
    )
    with pytest.raises(ConfigError, match="duplicate"):
        load_config(path)
