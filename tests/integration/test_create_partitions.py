"""Growing a topic's partition count on a real 3-node cluster: the CLI and rillet's client,
kafka-python's and librdkafka's admin clients (CreatePartitions over the Kafka listener).
New partitions take writes and reads at once; shrinking is refused, as in Kafka."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from cluster_checks import wait_for

from rillet.client import BlockingAdmin, BlockingConsumer, BlockingProducer, NewTopic
from rillet.client.errors import InvalidPartitionsError
from rillet.client.types import TopicPartition
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with LocalCluster(plan_cluster(tmp_path_factory.mktemp("grow"), 3)) as c:
        c.start()
        yield c


def partition_count(bootstrap: str, topic: str) -> int:
    with BlockingAdmin(bootstrap) as admin:
        return len(admin.describe_topics([topic])[0].partitions)


def test_the_cli_grows_a_topic_and_the_new_partitions_work(cluster: LocalCluster) -> None:
    bs = cluster.bootstrap
    with BlockingAdmin(bs) as admin:
        admin.create_topics([NewTopic("grow-cli", 2, replication_factor=3)])
    cli = [sys.executable, "-m", "rillet.cli.main", "topics", "alter", "grow-cli"]
    done = subprocess.run(
        [*cli, "--partitions", "5", "--bootstrap", bs],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "topic grow-cli now has 5 partitions"
    assert partition_count(bs, "grow-cli") == 5
    with BlockingProducer(bs, acks="all") as producer:
        assert producer.send("grow-cli", b"new", partition=4).result(timeout=30).offset == 0
    tp = TopicPartition("grow-cli", 4)
    with BlockingConsumer(bs, fetch_max_wait_ms=100) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        got = wait_for("the record", lambda: [r.value for r in consumer.poll(timeout_ms=200)])
    assert got == [b"new"]
    shrink = subprocess.run(
        [*cli, "--partitions", "3", "--bootstrap", bs],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shrink.returncode == 1
    lines = shrink.stderr.strip().splitlines()
    assert len(lines) == 1 and "has 5 partitions; it can only grow" in lines[0], shrink.stderr
    with BlockingAdmin(bs) as admin, pytest.raises(InvalidPartitionsError):
        admin.create_partitions({"grow-cli": 5})


def test_kafka_admin_clients_grow_topics(cluster: LocalCluster) -> None:
    from confluent_kafka.admin import AdminClient, NewPartitions
    from kafka.admin import KafkaAdminClient
    from kafka.admin import NewPartitions as KafkaNewPartitions

    bs, kafka_bs = cluster.bootstrap, cluster.plan.kafka_bootstrap
    with BlockingAdmin(bs) as admin:
        admin.create_topics([NewTopic("grow-kp", 1, 3), NewTopic("grow-ck", 1, 3)])
    kp = KafkaAdminClient(bootstrap_servers=kafka_bs, request_timeout_ms=30_000)
    try:
        kp.create_partitions({"grow-kp": KafkaNewPartitions(total_count=3)})
    finally:
        kp.close()
    assert partition_count(bs, "grow-kp") == 3
    ck = AdminClient({"bootstrap.servers": kafka_bs})
    futures = ck.create_partitions([NewPartitions("grow-ck", 4)], request_timeout=30)
    futures["grow-ck"].result(timeout=60)
    assert partition_count(bs, "grow-ck") == 4
    refused = ck.create_partitions([NewPartitions("grow-ck", 2)], request_timeout=30)
    with pytest.raises(Exception, match=r"INVALID_PARTITIONS|can only grow"):
        refused["grow-ck"].result(timeout=60)
