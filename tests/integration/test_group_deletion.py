"""Deleting consumer groups on a real 3-node cluster: through the CLI (native protocol), and
through Kafka's own admin clients (kafka-python, confluent-kafka) on the Kafka listener."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from cluster_checks import wait_for

from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
TIMEOUT_S = 30
TOPIC = "gd-topic"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    base = tmp_path_factory.mktemp("group-deletion")
    with LocalCluster(plan_cluster(base, 3, "broker_session_timeout_ms = 3000\n")) as c:
        c.start()
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": c.plan.kafka_bootstrap})
        admin.create_topics([NewTopic(TOPIC, 2, 3)])[TOPIC].result(timeout=TIMEOUT_S)
        wait_for(
            "the topic's leaders",
            lambda: (
                (t := admin.list_topics(TOPIC, timeout=TIMEOUT_S).topics.get(TOPIC)) is not None
                and t.error is None
                and all(p.leader >= 0 for p in t.partitions.values())
            ),
        )
        yield c


def commit_offsets(cluster: LocalCluster, group: str) -> None:
    """A group known only by its committed offsets (a consumer that assigned and left)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": cluster.plan.kafka_bootstrap, "group.id": group})
    try:
        consumer.commit(offsets=[TopicPartition(TOPIC, 0, 5)], asynchronous=False)
    finally:
        consumer.close()


def member(cluster: LocalCluster, group: str) -> Any:
    """A kafka-python member of ``group`` holding partitions (close it to leave)."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        bootstrap_servers=cluster.plan.kafka_bootstrap,
        group_id=group,
        enable_auto_commit=False,
        heartbeat_interval_ms=500,
    )
    # kafka-python's leader assigns nothing for a topic its metadata lacks: subscribe once
    # the member knows the topic.
    wait_for(f"{TOPIC} in the member's metadata", lambda: consumer.partitions_for_topic(TOPIC))
    consumer.subscribe([TOPIC])

    def assigned() -> bool:
        consumer.poll(timeout_ms=200)
        return bool(consumer.assignment())

    wait_for(f"a member of {group}", assigned, timeout_s=TIMEOUT_S)
    return consumer


def listed(cluster: LocalCluster) -> set[str]:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": cluster.plan.kafka_bootstrap})
    result = admin.list_consumer_groups().result(timeout=TIMEOUT_S)
    return {g.group_id for g in result.valid}


def rillet(cluster: LocalCluster, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rillet.cli.main", *argv, "--bootstrap", cluster.bootstrap],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_kafka_python_deletes_a_group_once_its_member_left(cluster: LocalCluster) -> None:
    from kafka.admin import KafkaAdminClient

    consumer = member(cluster, "gd-kp")
    admin = KafkaAdminClient(
        bootstrap_servers=cluster.plan.kafka_bootstrap, request_timeout_ms=TIMEOUT_S * 1000
    )
    try:
        refused = admin.delete_groups(["gd-kp", "gd-nobody"])
        assert refused == {"gd-kp": "NonEmptyGroupError", "gd-nobody": "GroupIdNotFoundError"}
        consumer.close()
        consumer = None
        assert admin.delete_groups(["gd-kp"]) == {"gd-kp": "OK"}
        assert "gd-kp" not in listed(cluster)
    finally:
        if consumer is not None:
            consumer.close()
        admin.close()


def test_confluent_kafka_deletes_a_group_and_its_offsets(cluster: LocalCluster) -> None:
    from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient

    commit_offsets(cluster, "gd-ck")
    assert "gd-ck" in listed(cluster)
    admin = AdminClient({"bootstrap.servers": cluster.plan.kafka_bootstrap})
    admin.delete_consumer_groups(["gd-ck"])["gd-ck"].result(timeout=TIMEOUT_S)
    assert "gd-ck" not in listed(cluster)
    with pytest.raises(KafkaException) as missing:
        admin.delete_consumer_groups(["gd-ck"])["gd-ck"].result(timeout=TIMEOUT_S)
    assert missing.value.args[0].code() == KafkaError.GROUP_ID_NOT_FOUND
    commit_offsets(cluster, "gd-ck")  # the same name starts afresh: no old offsets
    wanted = [ConsumerGroupTopicPartitions("gd-ck")]
    offsets = admin.list_consumer_group_offsets(wanted)["gd-ck"].result(timeout=TIMEOUT_S)
    assert {(tp.partition, tp.offset) for tp in offsets.topic_partitions} == {(0, 5)}


def test_cli_deletes_groups_with_one_line_errors(cluster: LocalCluster) -> None:
    commit_offsets(cluster, "gd-cli")
    consumer = member(cluster, "gd-busy")
    try:
        busy = rillet(cluster, "groups", "delete", "gd-cli", "gd-busy")
        assert busy.returncode == 1, busy
        assert "deleted group gd-cli" in busy.stdout
        (line,) = busy.stderr.strip().splitlines()
        assert "GroupNotEmptyError" in line and "gd-busy" in line
    finally:
        consumer.close()
    gone = rillet(cluster, "groups", "delete", "gd-cli")
    assert gone.returncode == 1
    (line,) = gone.stderr.strip().splitlines()
    assert "GroupIdNotFoundError" in line and "Traceback" not in gone.stderr
    tolerated = rillet(cluster, "groups", "delete", "gd-cli", "gd-busy", "--if-exists")
    assert tolerated.returncode == 0, tolerated
    assert tolerated.stdout.splitlines() == ["group gd-cli does not exist", "deleted group gd-busy"]
    assert not {"gd-cli", "gd-busy"} & listed(cluster)
