"""DeleteRecords on a real 3-node cluster: rillet's client and CLI, kafka-python's and
librdkafka's admin clients (over the Kafka listener).

Records below the new log start are gone for every reader (earliest offsets move, a fetch
below is out of range), on every replica: the leader answers only once each in-sync
replica has moved its log start, so the deletion survives killing the leader, and it is on
disk, so it survives restarts. Only committed records can be deleted.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from cluster_checks import wait_for

from rillet.client import BlockingAdmin, BlockingConsumer, BlockingProducer, NewTopic
from rillet.client.errors import OffsetOutOfRangeError
from rillet.client.types import TopicPartition
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

COUNT = 100


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with LocalCluster(plan_cluster(tmp_path_factory.mktemp("delrec"), 3)) as c:
        c.start()
        yield c


def topic_with_records(bootstrap: str, topic: str, partitions: int = 1) -> None:
    with BlockingAdmin(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, partitions, replication_factor=3)])
    with BlockingProducer(bootstrap, acks="all") as producer:
        for p in range(partitions):
            for i in range(COUNT):
                producer.send(topic, b"v%d" % i, partition=p)
        producer.flush()


def earliest(bootstrap: str, tp: TopicPartition) -> int:
    with BlockingConsumer(bootstrap) as consumer:
        return consumer.beginning_offsets([tp])[tp]


def first_value(bootstrap: str, tp: TopicPartition) -> bytes:
    """The first record a consumer reset to the earliest offset gets."""
    with BlockingConsumer(bootstrap, fetch_max_wait_ms=100) as consumer:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        records = wait_for("a record", lambda: consumer.poll(timeout_ms=200), timeout_s=30)
    return bytes(records[0].value)


def leader_of(bootstrap: str, tp: TopicPartition) -> int:
    with BlockingAdmin(bootstrap) as admin:
        (topic,) = admin.describe_topics([tp.topic])
    return topic.partitions[tp.partition].leader


def test_deleted_records_are_gone_on_every_replica_and_across_restarts(
    cluster: LocalCluster,
) -> None:
    bs = cluster.bootstrap
    tp = TopicPartition("delrec", 0)
    topic_with_records(bs, tp.topic)
    with BlockingAdmin(bs) as admin:
        assert admin.delete_records({tp: 40}) == {tp: 40}
        assert admin.delete_records({tp: 10}) == {tp: 40}  # never back
        with pytest.raises(OffsetOutOfRangeError):
            admin.delete_records({tp: COUNT + 1})  # not committed: nothing to delete
    assert earliest(bs, tp) == 40
    assert first_value(bs, tp) == b"v40"
    with BlockingConsumer(bs, auto_offset_reset="none", fetch_max_wait_ms=100) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 39)
        with pytest.raises(OffsetOutOfRangeError):
            for _ in range(50):
                consumer.poll(timeout_ms=200)

    # Every in-sync replica had the new log start before the answer: a new leader has it.
    old = leader_of(bs, tp)
    cluster.kill(old)
    wait_for("a new leader", lambda: leader_of(cluster.bootstrap, tp) not in (old, -1), 60)
    assert earliest(cluster.bootstrap, tp) == 40
    cluster.spawn(old)
    cluster.wait_ready([old])

    # On disk: a full restart keeps it.
    cluster.stop_all()
    cluster.start()
    assert earliest(cluster.bootstrap, tp) == 40
    assert first_value(cluster.bootstrap, tp) == b"v40"


def test_the_cli_deletes_up_to_the_end(cluster: LocalCluster) -> None:
    bs = cluster.bootstrap
    topic_with_records(bs, "delrec-cli", partitions=2)
    cli = [sys.executable, "-m", "rillet.cli.main", "topics", "delete-records"]
    done = subprocess.run(
        [*cli, "delrec-cli", "--before", "end", "--bootstrap", bs],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"delrec-cli-{p}: records below offset {COUNT} deleted" for p in (0, 1)
    ]
    for p in (0, 1):
        assert earliest(bs, TopicPartition("delrec-cli", p)) == COUNT
    bad = subprocess.run(
        [*cli, "delrec-cli", "--before", "-3", "--bootstrap", bs],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "expected an offset >= 0 or 'end'" in bad.stderr
    beyond = subprocess.run(
        [*cli, "delrec-cli", "--partition", "1", "--before", "1000", "--bootstrap", bs],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert beyond.returncode == 1 and "Traceback" not in beyond.stderr
    assert "OffsetOutOfRangeError" in beyond.stderr, beyond.stderr


def test_kafka_admin_clients_delete_records(cluster: LocalCluster) -> None:
    from confluent_kafka import TopicPartition as KafkaTopicPartition
    from confluent_kafka.admin import AdminClient
    from kafka import TopicPartition as KpTopicPartition
    from kafka.admin import KafkaAdminClient

    bs, kafka_bs = cluster.bootstrap, cluster.plan.kafka_bootstrap
    topic_with_records(bs, "delrec-kafka", partitions=2)
    kp = KafkaAdminClient(bootstrap_servers=kafka_bs, request_timeout_ms=30_000)
    try:
        answer = kp.delete_records({KpTopicPartition("delrec-kafka", 0): 25})
        assert answer[KpTopicPartition("delrec-kafka", 0)]["low_watermark"] == 25
    finally:
        kp.close()
    ck = AdminClient({"bootstrap.servers": kafka_bs})
    futures = ck.delete_records([KafkaTopicPartition("delrec-kafka", 1, 60)])
    (future,) = futures.values()
    assert future.result(timeout=30).low_watermark == 60
    bad = ck.delete_records([KafkaTopicPartition("delrec-kafka", 1, COUNT + 5)])
    (future,) = bad.values()
    with pytest.raises(Exception, match="OFFSET_OUT_OF_RANGE"):
        future.result(timeout=30)
    assert earliest(bs, TopicPartition("delrec-kafka", 0)) == 25
    assert earliest(bs, TopicPartition("delrec-kafka", 1)) == 60
