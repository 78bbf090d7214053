"""Byte-rate quotas: the token bucket's arithmetic, overrides, bounds and the config."""

from __future__ import annotations

from pathlib import Path

import pytest

from rillet.broker.config import ConfigError, load_config
from rillet.broker.network import client_quotas
from rillet.broker.network.client_quotas import ByteRates, ClientQuotas, QuotaKind
from rillet.broker.network.connection_throttle import ConnectionThrottle
from rillet.broker.security.session import Session

PRODUCE, FETCH = QuotaKind.PRODUCE, QuotaKind.FETCH


def test_a_principal_may_burst_one_window_then_waits_for_its_debt() -> None:
    quotas = ClientQuotas(ByteRates(producer_byte_rate=1_000), window_ms=1_000)
    assert quotas.record("User:a", PRODUCE, 1_000, now_ms=0) == 0  # the whole burst
    assert quotas.record("User:a", PRODUCE, 500, now_ms=0) == 500  # 500 B over at 1 kB/s
    # Half a second later the debt is paid: nothing is owed, nothing spare.
    assert quotas.record("User:a", PRODUCE, 0, now_ms=500) == 0
    assert quotas.record("User:a", PRODUCE, 100, now_ms=500) == 100


def test_the_average_rate_holds_over_many_requests() -> None:
    quotas = ClientQuotas(ByteRates(consumer_byte_rate=10_000), window_ms=1_000)
    now_ms, sent = 0, 0
    while now_ms < 60_000:  # a client that always sends as soon as it may
        now_ms += quotas.record("User:a", FETCH, 4_096, now_ms)
        sent += 4_096
    assert sent / (now_ms / 1000) == pytest.approx(10_000, rel=0.05)


def test_directions_principals_and_overrides_are_separate() -> None:
    quotas = ClientQuotas(
        ByteRates(producer_byte_rate=100, consumer_byte_rate=0),
        {"User:big": ByteRates(producer_byte_rate=1_000_000)},
    )
    assert quotas.record("User:a", PRODUCE, 200, 0) == 1_000
    assert quotas.record("User:b", PRODUCE, 100, 0) == 0  # its own bucket
    assert quotas.record("User:a", FETCH, 10**9, 0) == 0  # fetch is unlimited
    assert quotas.record("User:big", PRODUCE, 500_000, 0) == 0
    assert quotas.rate_of("User:big", FETCH) == 0
    assert quotas.enabled
    assert not ClientQuotas(ByteRates()).enabled


def test_a_clock_going_back_takes_nothing_and_gives_nothing() -> None:
    quotas = ClientQuotas(ByteRates(producer_byte_rate=1_000))
    assert quotas.record("User:a", PRODUCE, 1_000, 10_000) == 0
    assert quotas.record("User:a", PRODUCE, 100, 9_000) == 100


def test_tracked_principals_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_quotas, "MAX_TRACKED_PRINCIPALS", 3)
    quotas = ClientQuotas(ByteRates(producer_byte_rate=10))
    for i in range(10):
        quotas.record(f"User:{i}", PRODUCE, 10, 0)
    assert len(quotas._buckets) == 3
    assert quotas.record("User:0", PRODUCE, 10, 0) == 0  # forgotten: a full bucket again


def test_an_over_quota_connection_reads_again_only_after_its_throttle() -> None:
    quotas = ClientQuotas(ByteRates(producer_byte_rate=1_000))
    throttle = ConnectionThrottle(quotas, Session("kafka", "10.0.0.1", "User:a"))
    started = 100.0
    assert throttle.muted_until_s <= started
    assert throttle.charge(PRODUCE, 3_000, started) == 2_000
    assert throttle.muted_until_s == pytest.approx(started + 2.0)
    assert throttle.throttled_ms_total == 2_000


async def test_node_sessions_and_unlimited_nodes_are_never_throttled() -> None:
    quotas = ClientQuotas(ByteRates(producer_byte_rate=1))
    node = Session("native", "10.0.0.2", node_id=2)
    assert ConnectionThrottle(quotas, node).charge(PRODUCE, 10**9, 0.0) == 0
    client = Session("native", "10.0.0.3")
    assert ConnectionThrottle(ClientQuotas(ByteRates()), client).charge(PRODUCE, 10**9, 0.0) == 0
    assert ConnectionThrottle(None, client).charge(PRODUCE, 10**9, 0.0) == 0


def test_quotas_config_reads_defaults_and_per_user_tables(tmp_path: Path) -> None:
    path = tmp_path / "node.toml"
    path.write_text(
        "[quotas]\nproducer_byte_rate = 1048576\nquota_window_ms = 2000\n"
        '[[quotas.users]]\nprincipal = "User:etl"\nconsumer_byte_rate = 5000\n'
    )
    cfg = load_config(path).quotas
    meters = ClientQuotas.from_config(cfg)
    assert meters.rate_of("User:anyone", PRODUCE) == 1_048_576
    assert meters.rate_of("User:etl", FETCH) == 5_000
    assert meters.rate_of("User:etl", PRODUCE) == 0  # an override replaces the default


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[quotas]\nproducer_byte_rate = -1\n", "quotas.producer_byte_rate must be >= 0"),
        ("[quotas]\nquota_window_ms = 0\n", "quota_window_ms must be >= 1"),
        ('[[quotas.users]]\nprincipal = "etl"\n', "User:<name>"),
        (
            '[[quotas.users]]\nprincipal = "User:a"\n[[quotas.users]]\nprincipal = "User:a"\n',
            "more than once",
        ),
    ],
)
def test_bad_quota_settings_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "node.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path)
