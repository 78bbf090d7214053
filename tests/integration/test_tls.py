"""TLS on a real 3-node cluster: every listener and every link between nodes (inter-node
calls, replica fetches, the Raft transport) speaks TLS with certificates from a local CA.

rillet's client, kafka-python and confluent-kafka produce (acks=all: the followers'
replica fetches must work over TLS for the high watermark to move) and consume; a plaintext
connection to a TLS port is closed; a client that does not trust the CA cannot connect; a
certificate rotated on disk is served to new connections without a restart.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_checks import wait_for

from rillet.broker.security.tls_certificates import CertificateFiles, LocalCa
from rillet.client import BlockingAdmin, BlockingConsumer, BlockingProducer, NewTopic
from rillet.client.errors import RilletError
from rillet.client.tls import client_ssl_context
from rillet.client.types import TopicPartition
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

HOSTS = ("127.0.0.1", "localhost")


def tls_table(node: CertificateFiles, ca: Path) -> str:
    return (
        f'\n[tls]\ncertfile = "{node.certfile}"\nkeyfile = "{node.keyfile}"\n'
        f'cafile = "{ca}"\nclient_auth = "requested"\n'
    )


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> tuple[LocalCa, CertificateFiles]:
    base = tmp_path_factory.mktemp("tls")
    ca = LocalCa(base / "ca")
    return ca, ca.issue(base / "node", "node", HOSTS)


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, certs: tuple[LocalCa, CertificateFiles]
) -> Iterator[LocalCluster]:
    ca, node = certs
    plan = plan_cluster(
        tmp_path_factory.mktemp("tls-cluster"), 3, tls_table(node, ca.files.certfile)
    )
    with LocalCluster(plan) as c:
        c.start()
        yield c


def test_rillet_client_over_tls_with_replication(
    cluster: LocalCluster, certs: tuple[LocalCa, CertificateFiles]
) -> None:
    ca, _ = certs
    tls = client_ssl_context(str(ca.files.certfile))
    bs = cluster.bootstrap
    with BlockingAdmin(bs, ssl_context=tls) as admin:
        admin.create_topics([NewTopic("tls-native", 2, replication_factor=3)])
    with BlockingProducer(bs, acks="all", ssl_context=tls) as producer:
        offsets = [producer.send("tls-native", b"v%d" % i, partition=0) for i in range(50)]
        assert [f.result(timeout=30).offset for f in offsets] == list(range(50))
    tp = TopicPartition("tls-native", 0)
    with BlockingConsumer(bs, fetch_max_wait_ms=100, ssl_context=tls) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        got: list[bytes] = []
        wait_for(
            "50 records",
            lambda: got.extend(r.value for r in consumer.poll(200)) or len(got) >= 50,
            30,
        )
    assert got == [b"v%d" % i for i in range(50)]


def test_kafka_clients_over_ssl(
    cluster: LocalCluster, certs: tuple[LocalCa, CertificateFiles]
) -> None:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka import TopicPartition as KafkaTopicPartition
    from kafka import KafkaConsumer, KafkaProducer
    from kafka import TopicPartition as KpTopicPartition

    ca, _ = certs
    cafile = str(ca.files.certfile)
    kafka_bs = cluster.plan.kafka_bootstrap
    with BlockingAdmin(cluster.bootstrap, ssl_context=client_ssl_context(cafile)) as admin:
        admin.create_topics([NewTopic("tls-kafka", 1, replication_factor=3)])
    conf = {"bootstrap.servers": kafka_bs, "security.protocol": "SSL", "ssl.ca.location": cafile}
    producer = Producer({**conf, "enable.idempotence": True})
    for i in range(20):
        producer.produce("tls-kafka", b"c%d" % i)
    assert producer.flush(30) == 0
    kp = KafkaProducer(
        bootstrap_servers=kafka_bs, security_protocol="SSL", ssl_cafile=cafile, acks="all"
    )
    for i in range(20):
        kp.send("tls-kafka", b"k%d" % i)
    kp.flush(30)
    kp.close()
    consumer = Consumer({**conf, "group.id": "tls", "enable.auto.commit": False})
    consumer.assign([KafkaTopicPartition("tls-kafka", 0, 0)])
    values: list[bytes] = []
    try:
        wait_for(
            "40 records (confluent-kafka)",
            lambda: (
                values.extend(m.value() for m in consumer.consume(100, 0.2) if not m.error())
                or len(values) >= 40
            ),
            30,
        )
    finally:
        consumer.close()
    assert values == [b"c%d" % i for i in range(20)] + [b"k%d" % i for i in range(20)]
    kc = KafkaConsumer(bootstrap_servers=kafka_bs, security_protocol="SSL", ssl_cafile=cafile)
    try:
        kc.assign([KpTopicPartition("tls-kafka", 0)])
        kc.seek(KpTopicPartition("tls-kafka", 0), 0)
        seen: list[bytes] = []
        wait_for(
            "40 records (kafka-python)",
            lambda: (
                seen.extend(r.value for rs in kc.poll(200).values() for r in rs) or len(seen) >= 40
            ),
            30,
        )
    finally:
        kc.close()
    assert seen == values


def test_plaintext_and_untrusted_clients_are_refused(cluster: LocalCluster, tmp_path: Path) -> None:
    node = cluster.plan.nodes[0]
    for port in (node.port, node.kafka_port):
        with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
            # A Kafka ApiVersions v0 request in plaintext: the TLS handshake fails on it.
            body = struct.pack(">hhih", 18, 0, 1, 4) + b"test"
            sock.sendall(struct.pack(">i", len(body)) + body)
            assert sock.recv(4096) == b""  # closed, nothing answered
    other = LocalCa(tmp_path / "other-ca", "another CA")
    with (
        pytest.raises(RilletError),
        BlockingAdmin(
            cluster.bootstrap,
            request_timeout_ms=3_000,
            ssl_context=client_ssl_context(str(other.files.certfile)),
        ) as admin,
    ):
        admin.list_topics()


def test_the_cli_connects_with_tls_options(
    cluster: LocalCluster, certs: tuple[LocalCa, CertificateFiles]
) -> None:
    import subprocess
    import sys

    ca, _ = certs
    cli = [sys.executable, "-m", "rillet.cli.main"]
    with BlockingAdmin(
        cluster.bootstrap, ssl_context=client_ssl_context(str(ca.files.certfile))
    ) as admin:
        admin.create_topics([NewTopic("tls-cli", 1, replication_factor=3)])
    secured = subprocess.run(
        [
            *cli,
            "topics",
            "list",
            "--bootstrap",
            cluster.bootstrap,
            "--ssl-cafile",
            str(ca.files.certfile),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert secured.returncode == 0, secured.stderr
    assert "tls-cli" in secured.stdout.split()
    missing = subprocess.run(
        [*cli, "topics", "list", "--bootstrap", cluster.bootstrap, "--ssl-cafile", "/no/ca.pem"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert "cannot use the TLS files" in missing.stderr


def test_a_rotated_certificate_is_served_without_a_restart(
    cluster: LocalCluster, certs: tuple[LocalCa, CertificateFiles], tmp_path: Path
) -> None:
    _, node = certs
    rotated = LocalCa(tmp_path / "rotated-ca", "rotated CA")
    fresh = rotated.issue(tmp_path / "fresh", "node", HOSTS)
    shutil.copyfile(fresh.keyfile, node.keyfile)
    shutil.copyfile(fresh.certfile, node.certfile)
    port = cluster.plan.nodes[1].port
    context = ssl.create_default_context(cafile=str(rotated.files.certfile))

    def handshake() -> bool:
        try:
            with (
                socket.create_connection(("127.0.0.1", port), timeout=5) as sock,
                context.wrap_socket(sock, server_hostname="127.0.0.1"),
            ):
                return True
        except (ssl.SSLError, OSError):
            return False

    wait_for("the rotated certificate", handshake, 20)
    # The last test of the module: the other tests trust only the first CA.
