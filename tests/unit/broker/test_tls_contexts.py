"""[tls] settings are checked at start, and the node's TLS contexts follow its certificate
files: a changed file is picked up within a second, a broken one is refused (the previous
contexts stay)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rillet.broker.config import load_config
from rillet.broker.config.tls_config import TlsConfig
from rillet.broker.errors import ConfigError
from rillet.broker.security.tls_certificates import LocalCa
from rillet.broker.security.tls_contexts import TlsContexts, TlsSetupError


class Clock:
    def __init__(self) -> None:
        self.now_s = 0.0

    def __call__(self) -> float:
        return self.now_s


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('certfile = "a.pem"', "go together"),
        ('certfile = "a.pem"\nkeyfile = "k.pem"\nclient_auth = "always"', "client_auth"),
        ('certfile = "a.pem"\nkeyfile = "k.pem"\nclient_auth = "required"', "needs tls.cafile"),
        ('cafile = "ca.pem"', "plaintext"),
    ],
)
def test_inconsistent_settings_stop_the_node_with_one_line(
    tmp_path: Path, table: str, message: str
) -> None:
    path = tmp_path / "node.toml"
    path.write_text(f"[tls]\n{table}\n")
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_missing_files_are_a_startup_error(tmp_path: Path) -> None:
    config = TlsConfig(str(tmp_path / "no.pem"), str(tmp_path / "no-key.pem"))
    with pytest.raises(TlsSetupError, match=r"no\.pem"):
        TlsContexts(config)


def test_changed_files_are_reloaded_and_broken_ones_refused(tmp_path: Path) -> None:
    ca = LocalCa(tmp_path / "ca")
    node = ca.issue(tmp_path / "node", "node", ["127.0.0.1"])
    clock = Clock()
    contexts = TlsContexts(TlsConfig(str(node.certfile), str(node.keyfile)), clock)
    first = contexts.server()
    fresh = ca.issue(tmp_path / "fresh", "node", ["127.0.0.1", "localhost"])
    shutil.copyfile(fresh.certfile, node.certfile)
    shutil.copyfile(fresh.keyfile, node.keyfile)
    clock.now_s = 0.5
    assert contexts.server() is first  # checked at most once a second
    clock.now_s = 1.5
    second = contexts.server()
    assert second is not first
    node.keyfile.write_text("not a key")
    clock.now_s = 3.0
    assert contexts.server() is second  # broken: the previous contexts stay
