"""The Kafka-protocol listener on a real 3-node cluster, driven by Kafka's own clients.

One cluster serves the whole module (its start-up dominates the run time); each test uses
its own topic. Produce and consume need Kafka's v2 record batches on the broker; until the
broker stores them, those tests are skipped with that reason.
"""

from __future__ import annotations

import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_checks import wait_for

from rillet.broker.cli.local_cluster import LocalCluster, plan_cluster
from rillet.wire import batch

pytestmark = [
    pytest.mark.integration,
    # kafka-python reads its bundled JSON schemas with a deprecated importlib call.
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
needs_v2_batches = pytest.mark.skipif(
    batch.MAGIC != 2, reason="the broker does not store Kafka's v2 record batches yet"
)
TIMEOUT_S = 30


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    base = tmp_path_factory.mktemp("kafka-cluster")
    with LocalCluster(plan_cluster(base, 3, "broker_session_timeout_ms = 3000\n")) as c:
        c.start()
        yield c


@pytest.fixture
def bootstrap(cluster: LocalCluster) -> str:
    return cluster.plan.kafka_bootstrap


def test_kafka_python_admin_creates_describes_and_deletes_topics(
    cluster: LocalCluster, bootstrap: str
) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_S * 1000)
    try:
        described = admin.describe_cluster()
        assert {b["broker_id"]: b["port"] for b in described["brokers"]} == {
            n.node_id: n.kafka_port for n in cluster.plan.nodes
        }
        assert described["cluster_id"] == cluster.plan.cluster_id
        admin.create_topics([NewTopic("kp-admin", 3, 3)])
        wait_for("the topic", lambda: "kp-admin" in admin.list_topics())
        (topic,) = admin.describe_topics(["kp-admin"])
        assert topic["error_code"] == 0 and len(topic["partitions"]) == 3
        assert all(len(p["replica_nodes"]) == 3 for p in topic["partitions"])
        admin.delete_topics(["kp-admin"])
        wait_for("the deletion", lambda: "kp-admin" not in admin.list_topics())
    finally:
        admin.close()


def test_confluent_kafka_creates_a_topic_and_lists_its_offsets(bootstrap: str) -> None:
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic("ck-admin", num_partitions=2, replication_factor=3)])
    futures["ck-admin"].result(timeout=TIMEOUT_S)
    metadata = wait_for(
        "the topic's leaders",
        lambda: (
            (md := admin.list_topics(timeout=TIMEOUT_S)).topics.get("ck-admin") is not None
            and all(p.leader >= 0 for p in md.topics["ck-admin"].partitions.values())
            and md
        ),
    )
    assert len(metadata.brokers) == 3 and metadata.controller_id > 0
    assert sorted(metadata.topics["ck-admin"].partitions) == [0, 1]
    offsets = admin.list_offsets(
        {TopicPartition("ck-admin", 0): OffsetSpec.earliest()}, request_timeout=TIMEOUT_S
    )
    assert offsets[TopicPartition("ck-admin", 0)].result(timeout=TIMEOUT_S).offset == 0


def test_bad_input_closes_only_that_connection(cluster: LocalCluster, bootstrap: str) -> None:
    host, port = bootstrap.split(",", maxsplit=1)[0].split(":")
    with socket.create_connection((host, int(port)), timeout=TIMEOUT_S) as sock:
        sock.sendall(struct.pack(">i", 12) + b"\x00\x03\x00\x01garbage!")
        assert sock.recv(64) == b""  # closed
    with socket.create_connection((host, int(port)), timeout=TIMEOUT_S) as sock:
        # ApiVersions v9 (above ours): error 35 and the table in v0 format.
        sock.sendall(struct.pack(">ihhih", 10, 18, 9, 42, -1))
        size = struct.unpack(">i", _read(sock, 4))[0]
        body = _read(sock, size)
        assert struct.unpack(">ih", body[:6]) == (42, 35)
    assert "closing kafka connection" in cluster.log_tail(1, 200) + cluster.log_tail(
        2, 200
    ) + cluster.log_tail(3, 200)
    assert all(cluster.alive(n.node_id) for n in cluster.plan.nodes)


def _read(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        assert chunk, "connection closed early"
        data += chunk
    return data


def test_cluster_up_prints_the_kafka_bootstrap_line_before_the_native_one(
    tmp_path: Path,
) -> None:
    argv = [sys.executable, "-m", "rillet.broker.cli.main", "cluster"]
    base = ["--data-dir", str(tmp_path / "c")]
    up = subprocess.run(
        [*argv, "up", "--nodes", "1", *base],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    try:
        assert up.returncode == 0, up.stderr
        lines = up.stdout.strip().splitlines()
        assert lines[-1].startswith("bootstrap servers: ")
        assert lines[-2].startswith("kafka bootstrap servers: 127.0.0.1:")
    finally:
        subprocess.run([*argv, "down", *base], check=False, capture_output=True, timeout=60)
