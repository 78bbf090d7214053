"""ACLs on a real 3-node secure cluster (TLS everywhere, mutual TLS on the native listener,
SASL on the Kafka listener, the authorizer on, ``admin`` a super user), as ``cluster up
--secure`` makes one.

A principal without ACLs is refused with Kafka's errors on produce, fetch, group join,
offset reset and topic delete, and sees no topic in Metadata; once ACLs are added with
``rillet acls add`` the same calls work, with confluent-kafka and kafka-python (SASL_SSL)
and with rillet's own client (a client certificate's principal). ACLs are also managed from
kafka-python's admin (CreateAcls, DescribeAcls, DeleteAcls).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_checks import wait_for

from rillet.broker.security.tls_certificates import LocalCa
from rillet.cli.secure_cluster import SUPER_USERS, make_tls_files, plan_ssl_context
from rillet.client import BlockingAdmin, BlockingProducer, NewTopic
from rillet.client.errors import AuthorizationFailedError
from rillet.client.tls import client_ssl_context
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

MECHANISMS = "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN"
TOPIC = "orders"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    base = tmp_path_factory.mktemp("acls")
    tls = make_tls_files(base)
    plan = plan_cluster(
        base / "cluster", 3, tls=tls, kafka_sasl=MECHANISMS, super_users=SUPER_USERS
    )
    with LocalCluster(plan) as c:
        c.start()
        with BlockingAdmin(c.bootstrap, ssl_context=plan_ssl_context(plan)) as admin:
            admin.set_user_password("alice", "alice-secret")
            admin.create_topics([NewTopic(TOPIC, 1, replication_factor=3)])
        yield c


def acls_cli(c: LocalCluster, *args: str) -> subprocess.CompletedProcess[str]:
    tls = c.plan.tls
    assert tls is not None
    return subprocess.run(
        [sys.executable, "-m", "rillet.cli.main", "acls", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={
            **os.environ,
            "RILLET_BOOTSTRAP": c.bootstrap,
            "RILLET_SSL_CAFILE": tls.cafile,
            "RILLET_SSL_CERTFILE": tls.client_certfile,
            "RILLET_SSL_KEYFILE": tls.client_keyfile,
        },
    )


def alice(c: LocalCluster, **extra: Any) -> dict[str, Any]:
    tls = c.plan.tls
    assert tls is not None
    return {
        "bootstrap.servers": c.plan.kafka_bootstrap,
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": tls.cafile,
        # Mutual TLS carries the connection; the SASL login names the principal.
        "ssl.certificate.location": tls.client_certfile,
        "ssl.key.location": tls.client_keyfile,
        "sasl.mechanisms": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": "alice-secret",
        **extra,
    }


def kafka_python_alice(c: LocalCluster) -> dict[str, Any]:
    tls = c.plan.tls
    assert tls is not None
    return {
        "bootstrap_servers": c.plan.kafka_bootstrap,
        "security_protocol": "SASL_SSL",
        "ssl_cafile": tls.cafile,
        "ssl_certfile": tls.client_certfile,
        "ssl_keyfile": tls.client_keyfile,
        "sasl_mechanism": "SCRAM-SHA-256",
        "sasl_plain_username": "alice",
        "sasl_plain_password": "alice-secret",
    }


def produce_error(c: LocalCluster) -> Any:
    from confluent_kafka import Producer

    errors: list[Any] = []
    producer = Producer(alice(c, **{"message.timeout.ms": 10_000}))
    producer.produce(TOPIC, b"v", on_delivery=lambda err, msg: errors.append(err))
    producer.flush(20)
    return errors[0]


def fetch_error(c: LocalCluster) -> Any:
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer(alice(c, **{"group.id": "unused", "enable.auto.commit": False}))
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    found: list[Any] = []

    def topic_answer(m: Any) -> bool:  # librdkafka also looks for the group's coordinator
        return m.error() is None or m.error().code() != KafkaError.GROUP_AUTHORIZATION_FAILED

    try:
        wait_for(
            "a fetch answer",
            lambda: (
                found.extend(m.error() or "ok" for m in consumer.consume(1, 0.5) if topic_answer(m))
                or len(found) > 0
            ),
            30,
        )
    finally:
        consumer.close()
    return found[0]


def join_error(c: LocalCluster, group: str) -> Any:
    from confluent_kafka import Consumer

    consumer = Consumer(alice(c, **{"group.id": group, "auto.offset.reset": "earliest"}))
    consumer.subscribe([TOPIC])
    found: list[Any] = []
    try:
        wait_for(
            "a group answer",
            lambda: found.extend(m.error() or "ok" for m in consumer.consume(1, 0.5)) or found,
            30,
        )
    finally:
        consumer.close()
    return found[0]


def reset_error(c: LocalCluster, group: str) -> Any:
    from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(alice(c))
    request = ConsumerGroupTopicPartitions(group, [TopicPartition(TOPIC, 0, 0)])
    try:
        admin.alter_consumer_group_offsets([request])[group].result(timeout=30)
    except KafkaException as exc:
        return exc.args[0]
    return None


def delete_error(c: LocalCluster, topic: str) -> Any:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(alice(c))  # kept: a collected client cancels its requests
    try:
        admin.delete_topics([topic])[topic].result(timeout=30)
    except KafkaException as exc:
        return exc.args[0]
    return None


def test_without_acls_a_principal_gets_kafkas_authorization_errors(
    cluster: LocalCluster,
) -> None:
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import AdminClient

    c = cluster
    assert TOPIC not in AdminClient(alice(c)).list_topics(timeout=10).topics  # hidden
    assert produce_error(c).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    # Allowed to see the topic (DESCRIBE), not to read it: the fetch itself is refused.
    seen = acls_cli(
        c, "add", "--principal", "User:alice", "--topic", TOPIC, "--operation", "describe"
    )
    assert seen.returncode == 0, seen.stderr
    assert fetch_error(c).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert produce_error(c).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED  # seen, not WRITE
    assert join_error(c, "g-none").code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    assert reset_error(c, "g-none").code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    assert delete_error(c, TOPIC).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    with BlockingAdmin(c.bootstrap, ssl_context=plan_ssl_context(c.plan)) as admin:
        assert TOPIC in admin.list_topics()  # the super user sees it
    removed = acls_cli(c, "remove", "--principal", "User:alice")
    assert removed.stdout == "removed ALLOW User:alice from * DESCRIBE topic orders\n", removed


def test_with_acls_kafka_clients_work_over_sasl_ssl(cluster: LocalCluster) -> None:
    from confluent_kafka import Consumer, Producer
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    c = cluster
    assert acls_cli(c, "list").stdout == "", "left over"
    for args in (
        ["--topic", TOPIC, "--operation", "write", "--operation", "read"],
        ["--group", "g-", "--prefixed", "--operation", "read"],
    ):
        added = acls_cli(c, "add", "--principal", "User:alice", *args)
        assert added.returncode == 0, added.stderr
        assert added.stdout.startswith("added ALLOW User:alice from *")
    listed = acls_cli(c, "list", "--principal", "User:alice")
    assert listed.stdout.splitlines() == [
        "ALLOW User:alice from * READ topic orders",
        "ALLOW User:alice from * WRITE topic orders",
        "ALLOW User:alice from * READ group g- (prefix)",
    ]
    producer = Producer(alice(c, **{"enable.idempotence": True}))
    producer.produce(TOPIC, b"confluent")
    assert producer.flush(30) == 0
    kp = KafkaProducer(**kafka_python_alice(c), acks="all")
    kp.send(TOPIC, b"kafka-python").get(timeout=30)
    kp.close()
    consumer = Consumer(alice(c, **{"group.id": "g-read", "auto.offset.reset": "earliest"}))
    consumer.subscribe([TOPIC])
    got: list[bytes] = []
    try:
        wait_for(
            "both records in a group",
            lambda: (
                got.extend(m.value() for m in consumer.consume(10, 0.5) if not m.error())
                or len(got) >= 2
            ),
            60,
        )
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    assert got == [b"confluent", b"kafka-python"]
    kc = KafkaConsumer(**kafka_python_alice(c), group_id="g-kp", auto_offset_reset="earliest")
    try:
        kc.assign([TopicPartition(TOPIC, 0)])
        seen: list[bytes] = []
        wait_for(
            "both records (kafka-python)",
            lambda: (
                seen.extend(r.value for rs in kc.poll(200).values() for r in rs) or len(seen) >= 2
            ),
            30,
        )
        kc.commit()
    finally:
        kc.close()
    assert seen == got
    assert reset_error(c, "g-read") is None  # READ on the group and the topic: allowed
    # Still no DELETE on the topic; with it, the delete goes through.
    assert delete_error(c, TOPIC) is not None
    acls_cli(c, "add", "--principal", "User:alice", "--topic", "scratch", "--operation", "all")
    with BlockingAdmin(c.bootstrap, ssl_context=plan_ssl_context(c.plan)) as admin:
        admin.create_topics([NewTopic("scratch", 1, replication_factor=3)])
    assert delete_error(c, "scratch") is None


def test_rillet_clients_are_authorized_by_their_certificate(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    c = cluster
    tls = c.plan.tls
    assert tls is not None
    bob = LocalCa(Path(tls.cafile).parent).issue(tmp_path, "bob")
    context = client_ssl_context(tls.cafile, str(bob.certfile), str(bob.keyfile))
    with BlockingAdmin(c.bootstrap, ssl_context=context) as admin:
        assert TOPIC not in admin.list_topics()
    with (
        BlockingProducer(c.bootstrap, ssl_context=context, delivery_timeout_ms=10_000) as p,
        pytest.raises(AuthorizationFailedError),
    ):
        p.send(TOPIC, b"refused").result(timeout=20)
    added = acls_cli(
        c, "add", "--principal", "User:CN=bob", "--topic", TOPIC, "--operation", "write"
    )
    assert added.returncode == 0, added.stderr
    with BlockingAdmin(c.bootstrap, ssl_context=context) as admin:
        assert TOPIC in admin.list_topics()  # WRITE implies DESCRIBE
    with BlockingProducer(c.bootstrap, ssl_context=context) as p:
        assert p.send(TOPIC, b"from bob").result(timeout=30).offset >= 0
    removed = acls_cli(c, "remove", "--principal", "User:CN=bob")
    assert removed.stdout.strip() == "removed ALLOW User:CN=bob from * WRITE topic orders"
    with BlockingAdmin(c.bootstrap, ssl_context=context) as admin:
        assert TOPIC not in admin.list_topics()


def test_kafka_admin_clients_manage_acls(cluster: LocalCluster) -> None:
    from kafka.admin import (
        ACL,
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        KafkaAdminClient,
        ResourcePattern,
        ResourcePatternFilter,
        ResourceType,
    )

    c = cluster
    tls = c.plan.tls
    assert tls is not None
    kp = KafkaAdminClient(**kafka_python_alice(c))
    try:
        acl = ACL(
            "User:carol",
            "*",
            ACLOperation.READ,
            ACLPermissionType.ALLOW,
            ResourcePattern(ResourceType.TOPIC, "audit", ACLResourcePatternType.LITERAL),
        )
        refused = kp.create_acls([acl])  # alice may not ALTER the cluster
        assert refused["failed"] and not refused["succeeded"]
    finally:
        kp.close()
    added = acls_cli(
        c,
        "add",
        "--principal",
        "User:alice",
        "--cluster",
        "--operation",
        "alter",
        "--operation",
        "describe",
    )
    assert added.returncode == 0, added.stderr
    kp = KafkaAdminClient(**kafka_python_alice(c))
    try:
        # Alice's new permission reaches the node she asks when it applies the change.
        made = wait_for("alice to be allowed to create ACLs", lambda: _created(kp, acl))
        assert made["succeeded"] and not made["failed"]
        carols = ACLFilter(
            "User:carol",
            None,
            ACLOperation.ANY,
            ACLPermissionType.ANY,
            ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY),
        )
        # The node asked may apply the committed change a moment after the controller
        # answered (as on Kafka, where each broker applies the metadata log on its own).
        found = wait_for("carol's ACL to be described", lambda: kp.describe_acls(carols)[0])
        assert [(a.principal, a.operation, a.resource_pattern.resource_name) for a in found] == [
            ("User:carol", ACLOperation.READ, "audit")
        ]
        deleted = kp.delete_acls(
            [
                ACLFilter(
                    "User:carol",
                    None,
                    ACLOperation.ANY,
                    ACLPermissionType.ANY,
                    ResourcePatternFilter(ResourceType.TOPIC, "audit", ACLResourcePatternType.ANY),
                )
            ]
        )
        assert len(deleted[0][1]) == 1
    finally:
        kp.close()
    wait_for("carol's ACL to be gone", lambda: "User:carol" not in acls_cli(c, "list").stdout)


def _created(admin: Any, acl: Any) -> dict[str, Any] | None:
    """create_acls' answer once it succeeded (an ACL that exists already is created again)."""
    answer: dict[str, Any] = admin.create_acls([acl])
    return answer if answer["succeeded"] else None
