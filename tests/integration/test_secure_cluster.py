"""``rillet cluster up --secure`` as a user runs it: a 3-node cluster with TLS on every link,
mutual TLS for clients and SASL (user ``admin``) on the Kafka listeners; the files it
writes are all a client needs (rillet's CLI with client.env, librdkafka with
client.properties), and a client without a certificate of the cluster's CA is refused. The
HTTP endpoints serve HTTPS and ask for the token in the file it writes."""

from __future__ import annotations

import os
import ssl
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from rillet.client import BlockingAdmin
from rillet.client.errors import RilletError
from rillet.client.tls import client_ssl_context
from rillet.launcher.local_cluster import load_plan

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def rillet(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rillet.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
        input="",
    )


def sourced(env_file: Path) -> dict[str, str]:
    env = dict(os.environ)
    for line in env_file.read_text().splitlines():
        key, _, value = line.removeprefix("export ").partition("=")
        env[key] = value
    return env


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    base = tmp_path_factory.mktemp("secure") / "cluster"
    up = rillet(["cluster", "up", "--secure", "--data-dir", str(base)])
    try:
        assert up.returncode == 0, up.stderr
        assert "TLS on every listener and link" in up.stdout
        assert "HTTPS endpoints: the console, /api/* and labelled /metrics" in up.stdout
        assert up.stdout.splitlines()[-1].startswith("bootstrap servers: ")
        yield base
    finally:
        rillet(["cluster", "down", "--data-dir", str(base), "--purge"])


def test_the_cli_and_librdkafka_work_with_the_files_it_writes(secure: Path) -> None:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    env = sourced(secure / "tls" / "client.env")
    made = rillet(
        ["topics", "create", "sec", "--partitions", "1", "--replication-factor", "3"], env
    )
    assert made.returncode == 0, made.stderr
    produced = rillet(["produce", "sec", "--acks", "all"], env | {})
    assert produced.returncode == 0, produced.stderr
    conf = dict(
        line.split("=", 1)
        for line in (secure / "tls" / "client.properties").read_text().splitlines()
    )
    assert conf["security.protocol"] == "SASL_SSL" and conf["sasl.username"] == "admin"
    producer = Producer({**conf, "enable.idempotence": True})
    producer.produce("sec", b"from librdkafka")
    assert producer.flush(30) == 0
    consumer = Consumer({**conf, "group.id": "sec", "enable.auto.commit": False})
    consumer.assign([KafkaTopicPartition("sec", 0, 0)])
    try:
        messages = [m for m in consumer.consume(10, 10) if m.error() is None]
    finally:
        consumer.close()
    assert [m.value() for m in messages] == [b"from librdkafka"]
    status = rillet(["cluster", "status", "--data-dir", str(secure)])
    assert status.returncode == 0, status.stderr
    assert "under-replicated: 0" in status.stdout
    # librdkafka's admin acts by ACLs (the certificate is the super user).
    acls = rillet(["acls", "list", "--principal", "User:admin"], env)
    assert acls.stdout.splitlines() == [
        "ALLOW User:admin from * ALL topic *",
        "ALLOW User:admin from * ALL group *",
        "ALLOW User:admin from * ALL cluster kafka-cluster",
    ], acls.stderr


def test_a_client_without_a_certificate_is_refused(secure: Path) -> None:
    env = sourced(secure / "tls" / "client.env")
    context = client_ssl_context(env["RILLET_SSL_CAFILE"])  # trusts the nodes, has no cert
    with (
        pytest.raises(RilletError),
        BlockingAdmin(
            env["RILLET_BOOTSTRAP"], request_timeout_ms=3_000, ssl_context=context
        ) as admin,
    ):
        admin.list_topics()


def test_the_http_endpoints_serve_https_and_ask_for_the_token_it_writes(secure: Path) -> None:
    token_file = secure / "tls" / "http.token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    plan = load_plan(secure)
    assert plan.tls is not None
    metrics = plan.metrics_urls.split(",")[0]
    assert metrics.startswith("https://")
    context = ssl.create_default_context(cafile=plan.tls.cafile)  # no client certificate
    api = metrics.removesuffix("metrics") + "api/cluster"
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(api, context=context, timeout=10)
    assert refused.value.code == 401
    bearer = {"Authorization": f"Bearer {token_file.read_text().strip()}"}
    with urllib.request.urlopen(
        urllib.request.Request(api, headers=bearer), context=context, timeout=10
    ) as answer:
        assert answer.status == 200


def test_the_demo_runs_on_a_secure_cluster_of_its_own() -> None:
    done = rillet(["demo", "--secure", "--records", "200"])
    assert done.returncode == 0, done.stderr
    assert "secure (TLS on every link, mutual TLS, SASL)" in done.stdout
    assert done.stdout.strip().splitlines()[-2].endswith("demo OK")
