"""SASL on the Kafka listener of a real 3-node TLS cluster (SASL_SSL, as Kafka clients
configure it): users are created with rillet's admin client and CLI (credentials in the
metadata log, so every node knows them at once); confluent-kafka with SCRAM-SHA-512 and
kafka-python with SCRAM-SHA-256 and PLAIN produce and consume; a wrong password, an unknown
user and a client that skips SASL are refused; a deleted user can no longer log in."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from cluster_checks import wait_for

from rillet.cli.secure_cluster import make_tls_files
from rillet.client import BlockingAdmin, NewTopic
from rillet.client.tls import client_ssl_context
from rillet.launcher.local_cluster import LocalCluster, TlsPlan, plan_cluster

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

MECHANISMS = "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalCluster, TlsPlan]]:
    base = tmp_path_factory.mktemp("sasl")
    tls = replace(make_tls_files(base), client_auth="none")
    with LocalCluster(plan_cluster(base / "cluster", 3, tls=tls, kafka_sasl=MECHANISMS)) as c:
        c.start()
        with BlockingAdmin(c.bootstrap, ssl_context=client_ssl_context(tls.cafile)) as admin:
            admin.set_user_password("alice", "alice-secret")
            admin.create_topics([NewTopic("sasl", 1, replication_factor=3)])
        yield c, tls


def sasl_conf(cluster: LocalCluster, tls: TlsPlan, mechanism: str, user: str, password: str) -> Any:
    return {
        "bootstrap.servers": cluster.plan.kafka_bootstrap,
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": tls.cafile,
        "sasl.mechanisms": mechanism,
        "sasl.username": user,
        "sasl.password": password,
    }


def kafka_python_sasl(cluster: LocalCluster, tls: TlsPlan, mechanism: str) -> dict[str, Any]:
    """kafka-python's settings for user alice over SASL_SSL."""
    return {
        "bootstrap_servers": cluster.plan.kafka_bootstrap,
        "security_protocol": "SASL_SSL",
        "ssl_cafile": tls.cafile,
        "sasl_mechanism": mechanism,
        "sasl_plain_username": "alice",
        "sasl_plain_password": "alice-secret",
    }


def test_kafka_clients_authenticate_with_scram_and_plain(
    cluster: tuple[LocalCluster, TlsPlan],
) -> None:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka import TopicPartition as KafkaTopicPartition
    from kafka import KafkaConsumer, KafkaProducer
    from kafka import TopicPartition as KpTopicPartition

    c, tls = cluster
    conf = sasl_conf(c, tls, "SCRAM-SHA-512", "alice", "alice-secret")
    producer = Producer({**conf, "enable.idempotence": True})
    producer.produce("sasl", b"scram-512")
    assert producer.flush(30) == 0
    for mechanism in ("SCRAM-SHA-256", "PLAIN"):
        kp = KafkaProducer(**kafka_python_sasl(c, tls, mechanism), acks="all")
        kp.send("sasl", mechanism.encode()).get(timeout=30)
        kp.close()
    consumer = Consumer({**conf, "group.id": "sasl", "enable.auto.commit": False})
    consumer.assign([KafkaTopicPartition("sasl", 0, 0)])
    got: list[bytes] = []
    try:
        wait_for(
            "3 records",
            lambda: (
                got.extend(m.value() for m in consumer.consume(10, 0.2) if not m.error())
                or len(got) >= 3
            ),
            30,
        )
    finally:
        consumer.close()
    assert got == [b"scram-512", b"SCRAM-SHA-256", b"PLAIN"]
    kc = KafkaConsumer(**kafka_python_sasl(c, tls, "SCRAM-SHA-256"))
    try:
        tp = KpTopicPartition("sasl", 0)
        kc.assign([tp])
        kc.seek(tp, 0)
        seen: list[bytes] = []
        wait_for(
            "3 records (kafka-python)",
            lambda: (
                seen.extend(r.value for rs in kc.poll(200).values() for r in rs) or len(seen) >= 3
            ),
            30,
        )
    finally:
        kc.close()
    assert seen == got


def test_bad_credentials_and_no_sasl_are_refused(cluster: tuple[LocalCluster, TlsPlan]) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    c, tls = cluster
    for user, password, mechanism in (
        ("alice", "wrong", "SCRAM-SHA-512"),
        ("mallory", "alice-secret", "SCRAM-SHA-256"),
        ("alice", "wrong", "PLAIN"),
    ):
        admin = AdminClient(sasl_conf(c, tls, mechanism, user, password))
        with pytest.raises(KafkaException):  # librdkafka: "Broker transport failure"
            admin.list_topics(timeout=3)
    with pytest.raises(KafkaError):  # TLS but no SASL: the connection is closed
        KafkaProducer(
            bootstrap_servers=c.plan.kafka_bootstrap,
            security_protocol="SSL",
            ssl_cafile=tls.cafile,
            request_timeout_ms=5_000,
            max_block_ms=5_000,
            bootstrap_timeout_ms=5_000,  # its default, 30 s, is the whole wait here
        ).send("sasl", b"x").get(timeout=10)


def test_the_cli_manages_users(cluster: tuple[LocalCluster, TlsPlan]) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    c, tls = cluster
    cli = [sys.executable, "-m", "rillet.cli.main", "users"]
    common = ["--bootstrap", c.bootstrap, "--ssl-cafile", tls.cafile]

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*cli, *args, *common],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    made = run("create", "bob", "--password-stdin", stdin="bob-secret\n")
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == "user bob: SCRAM-SHA-256, SCRAM-SHA-512"
    listed = run("list")
    assert "bob  SCRAM-SHA-256, SCRAM-SHA-512" in listed.stdout.splitlines()
    admin = AdminClient(sasl_conf(c, tls, "SCRAM-SHA-256", "bob", "bob-secret"))
    assert "sasl" in admin.list_topics(timeout=5).topics
    assert run("delete", "bob").returncode == 0
    refused = AdminClient(sasl_conf(c, tls, "SCRAM-SHA-256", "bob", "bob-secret"))
    with pytest.raises(KafkaException):
        refused.list_topics(timeout=5)
    missing = run("delete", "bob")
    assert missing.returncode == 1 and "ResourceNotFoundError" in missing.stderr


def _logins_admitted(c: LocalCluster, tls: TlsPlan) -> bool | None:
    """Whether alice logs in with SCRAM-SHA-512 on each node, asked alone."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    for node in c.plan.nodes:
        conf = sasl_conf(c, tls, "SCRAM-SHA-512", "alice", "alice-secret")
        conf["bootstrap.servers"] = node.kafka_bootstrap
        try:
            AdminClient(conf).list_topics(timeout=8)
        except KafkaException:
            return None
    return True


def test_kafka_admin_clients_manage_scram_users(cluster: tuple[LocalCluster, TlsPlan]) -> None:
    from confluent_kafka.admin import AdminClient
    from kafka.admin import (
        KafkaAdminClient,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    c, tls = cluster
    # The tests before this one failed logins from this address on purpose, and each node
    # spaces and refuses logins from an address with recent failures (up to
    # failed_authentication_delay_max_ms): wait until every node admits alice again.
    wait_for("alice's logins admitted on every node", lambda: _logins_admitted(c, tls), 40)
    kp = KafkaAdminClient(**kafka_python_sasl(c, tls, "SCRAM-SHA-512"))
    try:
        made = kp.alter_user_scram_credentials(
            [UserScramCredentialUpsertion("carol", ScramMechanism.SCRAM_SHA_256, "carol-secret")]
        )
        assert made == {"carol": None}
        # kafka-python asks its least loaded node, which may apply the controller's decision
        # a moment after the controller answered (every node's view is eventual, as Kafka's).
        described = wait_for(
            "carol's credentials on the node asked",
            lambda: (
                (d := kp.describe_user_scram_credentials(["carol"]))["carol"]["error"] is None and d
            ),
        )
        infos = described["carol"]["credential_infos"]
        assert [(i["mechanism"], i["iterations"]) for i in infos] == [
            (ScramMechanism.SCRAM_SHA_256, 4096)
        ]
        carol = AdminClient(sasl_conf(c, tls, "SCRAM-SHA-256", "carol", "carol-secret"))
        assert "sasl" in carol.list_topics(timeout=10).topics
        gone = kp.alter_user_scram_credentials(
            [UserScramCredentialDeletion("carol", ScramMechanism.SCRAM_SHA_256)]
        )
        assert gone == {"carol": None}
        wait_for(
            "carol's credentials gone on the node asked",
            lambda: kp.describe_user_scram_credentials(["carol"])["carol"]["error"] is not None,
        )
    finally:
        kp.close()
