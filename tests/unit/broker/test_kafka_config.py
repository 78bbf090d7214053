"""``[kafka_listener]``: off by default, checked at start-up."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rillet.broker.config import load_config
from rillet.broker.errors import ConfigError


def test_the_kafka_listener_is_off_by_default_and_configurable(tmp_path: Path) -> None:
    assert not load_config(None).kafka_listener.enabled
    path = tmp_path / "node.toml"
    path.write_text('[kafka_listener]\nenabled = true\nport = 0\nadvertised_host = "k.example"\n')
    cfg = load_config(path)
    assert cfg.kafka_listener.enabled and cfg.kafka_listener.port == 0
    assert cfg.kafka_advertised_host == "k.example"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[kafka_listener]\nport = 70000\n", "kafka_listener.port must be 0..65535"),
        ("[kafka_listener]\nenabled = true\nport = 9092\n", "is also listener.port"),
        ("[kafka_listener]\nenable = true\n", "unknown config key(s): kafka_listener.enable"),
    ],
)
def test_bad_kafka_listener_settings_are_refused_by_name(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "node.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(path)
