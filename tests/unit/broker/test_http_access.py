"""Who may read what on the HTTP endpoint: Host checks (DNS rebinding), the bearer token,
mutual TLS, and /metrics without labelled series; then the same decisions through the
endpoint's route and a token file read at start."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.parser import text_string_to_metric_families

from rillet.broker.config import load_config
from rillet.broker.errors import ConfigError
from rillet.broker.http.access import AccessPolicy, host_name
from rillet.broker.http.endpoint import access_policy

TOKEN = "s3cret-token-of-24-chars"
NODE_NAMES = ("10.0.0.5", "broker-1.internal")


def policy(token: str | None = TOKEN, allowed: str = "") -> AccessPolicy:
    return AccessPolicy(NODE_NAMES, allowed, token, frozenset({"User:CN=admin"}))


@pytest.mark.parametrize(
    ("header", "name"),
    [("Broker-1.Internal:9620", "broker-1.internal"), ("[::1]:80", "::1"), ("a.b.", "a.b")],
)
def test_host_names_lose_port_brackets_case_and_final_dot(header: str, name: str) -> None:
    assert host_name(header) == name


@pytest.mark.parametrize(
    "host",
    ["broker-1.internal:9620", "localhost", "127.0.0.1:9620", "[::1]:9620", "10.9.8.7", None],
)
def test_this_nodes_names_ip_literals_and_localhost_are_served(host: str | None) -> None:
    assert policy(None).admit("/api/cluster", host, None).refusal is None


def test_any_other_name_is_refused_with_421_even_with_the_token() -> None:
    access = policy().admit("/api/cluster", "evil.example:9620", f"Bearer {TOKEN}")
    assert access.refusal is not None and access.refusal.status == 421
    assert "evil.example" in access.refusal.reason and "\n" not in access.refusal.reason


def test_allowed_hosts_add_names_and_domain_suffixes() -> None:
    p = policy(None, allowed="metrics.example.com, .svc.cluster.local")
    assert p.admit("/", "metrics.example.com", None).refusal is None
    assert p.admit("/", "rillet-0.rillet.svc.cluster.local", None).refusal is None
    assert p.admit("/", "svc.cluster.local.evil", None).refusal is not None
    assert policy(None, allowed="*").admit("/", "anything", None).refusal is None


def test_probes_are_open_to_any_host_and_without_a_token() -> None:
    for path in ("/health", "/ready"):
        assert policy().admit(path, "evil.example", None).refusal is None


@pytest.mark.parametrize("path", ["/api/cluster", "/", "/index.html", "/unknown"])
def test_without_the_token_the_api_and_console_answer_401(path: str) -> None:
    p = policy()
    for authorization in (None, "Bearer wrong-token-of-24-chars!", f"Token {TOKEN}", "Basic %%"):
        access = p.admit(path, "localhost", authorization)
        assert access.refusal is not None and access.refusal.status == 401


def test_the_token_as_bearer_or_basic_password_or_a_super_user_certificate_is_accepted() -> None:
    p = policy()
    basic = base64.b64encode(f"anyone:{TOKEN}".encode()).decode()
    assert p.admit("/api/cluster", "localhost", f"Bearer {TOKEN}").refusal is None
    assert p.admit("/api/cluster", "localhost", f"Basic {basic}").refusal is None
    assert p.admit("/api/cluster", "localhost", None, "User:CN=admin").refusal is None
    assert p.admit("/api/cluster", "localhost", None, "User:CN=reader").refusal is not None


def test_metrics_without_the_token_are_served_without_detail() -> None:
    p = policy()
    bare = p.admit("/metrics", "localhost", None)
    assert bare.refusal is None and not bare.detail
    assert p.admit("/metrics", "localhost", f"Bearer {TOKEN}").detail
    assert policy(None).admit("/metrics", "localhost", None).detail


def test_a_missing_or_short_token_file_is_one_line_at_start(tmp_path: Path) -> None:
    short = tmp_path / "short"
    short.write_text("abc\n")
    for path in (tmp_path / "absent", short):
        config = load_config(None, {"http.auth_token_file": str(path)})
        with pytest.raises(ConfigError, match=r"http\.auth_token_file") as refused:
            access_policy(config)
        assert "\n" not in str(refused.value)
    good = tmp_path / "token"
    good.write_text(TOKEN + "\n")
    config = load_config(None, {"http.auth_token_file": str(good)})
    assert access_policy(config).credentials_ok(f"Bearer {TOKEN}", None)


def test_http_tls_is_a_setting_that_needs_the_node_certificate() -> None:
    with pytest.raises(ConfigError, match=r"http\.tls = true needs tls\.certfile"):
        load_config(None, {"http.tls": True})
    with pytest.raises(ConfigError, match=r"http\.tls must be true or false"):
        load_config(None, {"http.tls": "yes"})
    with pytest.raises(ConfigError, match=r"http\.request_head_timeout_ms"):
        load_config(None, {"http.request_head_timeout_ms": 0})
    assert load_config(None, {"http.tls": False}).http.tls is False


def test_node_level_metrics_leave_out_topic_and_group_series() -> None:
    from prometheus_client import CollectorRegistry
    from prometheus_client.exposition import generate_latest

    from rillet.broker.http.node_level_metrics import node_level_registry

    class Mixed:
        def collect(self):  # type: ignore[no-untyped-def]
            by_topic = GaugeMetricFamily("by_topic", "t", labels=("topic",))
            by_topic.add_metric(("secret-topic",), 1)
            lag = GaugeMetricFamily("lag", "g", labels=("group", "partition"))
            lag.add_metric(("secret-group", "0"), 3)
            role = GaugeMetricFamily("role", "r", labels=("role",))
            role.add_metric(("leader",), 1)
            yield from (by_topic, lag, role)

    registry = CollectorRegistry()
    registry.register(Mixed())  # type: ignore[arg-type]
    text = generate_latest(node_level_registry(registry)).decode()
    assert {f.name for f in text_string_to_metric_families(text)} == {"role"}
    assert "secret" not in text
    assert "secret-topic" in generate_latest(registry).decode()
