"""Node TOML config and per-topic overrides: defaults, overrides, and clear refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from rillet.broker.config import NodeConfig, load_config
from rillet.broker.errors import ConfigError, TopicError
from rillet.broker.topic_config import effective_log_config, validate_topic_configs
from rillet.broker.topic_registry import TopicRegistry, validate_topic_name
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
        ("[topics]\nauto_create_topics = 1\n", "must be true or false"),
        ("listener = 3\n", "listener must be a table"),
        ("node_id = \n", "not valid TOML"),
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
    "configs",
    [{"retention.msx": "1"}, {"retention.ms": "soon"}, {"cleanup.policy": "compact"}],
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


def test_topic_registry_persists_and_refuses_duplicates(tmp_path: Path) -> None:
    reg = TopicRegistry(tmp_path)
    reg.add("a.b-c_d", 3, {"retention.ms": "5"})
    with pytest.raises(TopicError) as info:
        reg.add("a.b-c_d", 1, {})
    assert info.value.code == ErrorCode.TOPIC_ALREADY_EXISTS
    again = TopicRegistry(tmp_path)
    t = again.get("a.b-c_d")
    assert t is not None and t.num_partitions == 3 and t.configs == {"retention.ms": "5"}
    again.remove("a.b-c_d")
    assert TopicRegistry(tmp_path).all() == []
