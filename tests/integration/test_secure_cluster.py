"""``rillet cluster up --secure`` as a user runs it: a 3-node cluster with TLS on every link,
the admin's certificate as the only super user and SASL logins on both listeners; the
admin's files (rillet's CLI with client.env, librdkafka with client.properties) are all it
needs; every secret is 0600 in a 0700 directory, node data included; a client with neither a
certificate of the cluster's CA nor a login is refused, and an application user made with
``rillet users create --cert`` can do nothing with its own files until ACLs allow it. The
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
from typing import Any

import pytest

from rillet.client import BlockingAdmin, BlockingProducer
from rillet.client.errors import (
    AuthorizationFailedError,
    ClusterAuthorizationFailedError,
    RilletError,
)
from rillet.client.security import SETTINGS, from_settings
from rillet.client.tls import client_ssl_context
from rillet.client.types import NewTopic
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

    env = sourced(secure / "tls" / "admin" / "client.env")
    made = rillet(
        ["topics", "create", "sec", "--partitions", "1", "--replication-factor", "3"], env
    )
    assert made.returncode == 0, made.stderr
    produced = rillet(["produce", "sec", "--acks", "all"], env | {})
    assert produced.returncode == 0, produced.stderr
    conf = dict(
        line.split("=", 1)
        for line in (secure / "tls" / "admin" / "client.properties").read_text().splitlines()
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


def test_a_client_without_a_certificate_or_a_login_is_refused(secure: Path) -> None:
    env = sourced(secure / "tls" / "admin" / "client.env")
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


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_secrets_and_node_data_are_their_owners_only(secure: Path) -> None:
    directories = [secure, *(p for p in secure.rglob("*") if p.is_dir())]
    assert {str(p): mode(p) for p in directories} == {str(p): 0o700 for p in directories}
    secrets = [
        secure / "cluster.secret",
        *(p for p in (secure / "tls").rglob("*") if p.is_file()),
        *(p for p in secure.glob("node*/data/**/*") if p.is_file()),  # Raft log, metadata
    ]
    assert any("__raft" in p.parts for p in secrets)
    assert {str(p): mode(p) for p in secrets} == {str(p): 0o600 for p in secrets}


def user_options(env_file: Path, login: bool = True) -> dict[str, Any]:
    """rillet's client options from a client.env (without its login: certificate only)."""
    env = sourced(env_file)
    values = {name: env.get(var) for name, (var, _) in SETTINGS.items()}
    if not login:
        values = {k: v for k, v in values.items() if not k.startswith("sasl_")}
    return from_settings(values).client_options() | {"request_timeout_ms": 10_000}


def test_a_user_without_acls_can_do_nothing_with_its_files(secure: Path) -> None:
    admin_env = secure / "tls" / "admin" / "client.env"
    bootstrap = sourced(admin_env)["RILLET_BOOTSTRAP"]
    with BlockingAdmin(bootstrap, **user_options(admin_env)) as admin:
        admin.create_topics([NewTopic("guarded", 1, 3)])
    created = rillet(["users", "create", "app", "--cert", "--data-dir", str(secure)])
    assert created.returncode == 0, created.stderr
    files = secure / "tls" / "users" / "app"
    assert str(files) in created.stdout
    assert "nothing until `rillet acls add --principal User:app" in created.stdout
    # Native listener: logged in as User:app, and with the certificate alone (User:CN=app).
    for options in (user_options(files / "client.env"), user_options(files / "client.env", False)):
        with BlockingAdmin(bootstrap, **options) as admin:
            assert admin.list_topics() == []
            with pytest.raises(AuthorizationFailedError):
                admin.create_topics([NewTopic("mine", 1, 1)])
            with pytest.raises(ClusterAuthorizationFailedError):
                admin.set_user_password("app", "another password")
    with (
        BlockingProducer(bootstrap, **user_options(files / "client.env")) as producer,
        pytest.raises(AuthorizationFailedError),
    ):
        producer.send("guarded", b"not allowed").result(30)
    user_env = sourced(files / "client.env")
    consumed = rillet(["consume", "guarded", "--from-beginning", "--timeout-ms", "2000"], user_env)
    assert consumed.returncode == 1 and "AuthorizationFailedError" in consumed.stderr
    kafka_client_can_do_nothing(files / "client.properties")


def kafka_client_can_do_nothing(properties: Path) -> None:
    """The Kafka listener, with the librdkafka file a user without ACLs was given (the
    clients are destroyed on return, before the cluster stops)."""
    from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
    from confluent_kafka import TopicPartition as KafkaTopicPartition
    from confluent_kafka.admin import AdminClient
    from confluent_kafka.admin import NewTopic as KafkaNewTopic

    conf = dict(line.split("=", 1) for line in properties.read_text().split())
    assert conf["sasl.username"] == "app"
    producer_errors: list[Any] = []
    kafka_producer = Producer({**conf, "message.timeout.ms": 10_000})
    assert "guarded" not in kafka_producer.list_topics(timeout=10).topics
    kafka_producer.produce("guarded", b"x", on_delivery=lambda e, m: producer_errors.append(e))
    kafka_producer.flush(20)
    assert [e.code() for e in producer_errors] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]
    kafka_consumer = Consumer({**conf, "group.id": "app", "enable.auto.commit": False})
    kafka_consumer.assign([KafkaTopicPartition("guarded", 0, 0)])
    try:
        answers = [m.error() for m in kafka_consumer.consume(1, 10)]  # the first answer
    finally:
        kafka_consumer.close()
    assert answers and all(e is not None and "AUTHORIZATION" in e.name() for e in answers)
    kafka_admin = AdminClient(conf)
    future = kafka_admin.create_topics([KafkaNewTopic("mine", 1, 1)])["mine"]
    with pytest.raises(KafkaException) as refused:
        future.result(20)
    assert refused.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_the_demo_runs_on_a_secure_cluster_of_its_own() -> None:
    done = rillet(["demo", "--secure", "--records", "200"])
    assert done.returncode == 0, done.stderr
    assert "secure (TLS on every link, mutual TLS, SASL)" in done.stdout
    assert done.stdout.strip().splitlines()[-2].endswith("demo OK")
