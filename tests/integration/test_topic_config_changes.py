"""Changing topic configs at run time on a real 3-node cluster: the CLI and rillet's client,
librdkafka's IncrementalAlterConfigs and kafka-python's AlterConfigs. A change applies on
every node without a restart."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from cluster_checks import wait_for

from rillet.client import BlockingAdmin, BlockingProducer, NewTopic
from rillet.client.errors import InvalidTimestampError
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with LocalCluster(plan_cluster(tmp_path_factory.mktemp("configs"), 3)) as c:
        c.start()
        yield c


def overrides(bootstrap: str, topic: str) -> dict[str, str]:
    with BlockingAdmin(bootstrap) as admin:
        return dict(admin.describe_topics([topic])[0].configs)


def alter(bootstrap: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rillet.cli.main", "topics", "alter", *args,
         "--bootstrap", bootstrap],
        check=False, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_a_changed_timestamp_rule_applies_at_once_on_the_leader(cluster: LocalCluster) -> None:
    bs = cluster.bootstrap
    with BlockingAdmin(bs) as admin:
        admin.create_topics([NewTopic("cfg-ts", 1, replication_factor=3)])
    future_ms = int(time.time() * 1000) + 3_600_000  # an hour ahead: accepted by default
    with BlockingProducer(bs, acks="all") as producer:
        producer.send("cfg-ts", b"early", timestamp_ms=future_ms).result(timeout=30)
    done = alter(bs, "cfg-ts", "--config", "message.timestamp.after.max.ms=60000")
    assert done.returncode == 0, done.stderr
    assert "message.timestamp.after.max.ms=60000" in done.stdout
    assert overrides(bs, "cfg-ts") == {"message.timestamp.after.max.ms": "60000"}
    with BlockingProducer(bs, acks="all") as producer:
        refused = producer.send("cfg-ts", b"late", timestamp_ms=future_ms)
        with pytest.raises(InvalidTimestampError):
            refused.result(timeout=30)
    assert alter(bs, "cfg-ts", "--delete-config", "message.timestamp.after.max.ms").returncode == 0
    assert overrides(bs, "cfg-ts") == {}
    with BlockingProducer(bs, acks="all") as producer:
        producer.send("cfg-ts", b"again", timestamp_ms=future_ms).result(timeout=30)


def test_bad_changes_are_one_line_errors(cluster: LocalCluster) -> None:
    bs = cluster.bootstrap
    with BlockingAdmin(bs) as admin:
        admin.create_topics([NewTopic("cfg-bad", 1, replication_factor=3)])
    for args, message in (
        (("cfg-bad", "--config", "retention.ms=soon"), "retention.ms"),
        (("cfg-bad", "--config", "no.such.key=1"), "no.such.key"),
        (("cfg-missing", "--config", "retention.ms=1000"), "cfg-missing"),
    ):
        done = alter(bs, *args)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 1 and len(lines) == 1 and message in lines[0], done.stderr
    nothing = alter(bs, "cfg-bad")
    assert nothing.returncode == 2 and "say what to change" in nothing.stderr


def test_kafka_clients_change_topic_configs(cluster: LocalCluster) -> None:
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )
    from kafka.admin import ConfigResource as KafkaConfigResource
    from kafka.admin import ConfigResourceType, KafkaAdminClient

    bs, kafka_bs = cluster.bootstrap, cluster.plan.kafka_bootstrap
    with BlockingAdmin(bs) as admin:
        admin.create_topics([NewTopic("cfg-ck", 1, 3), NewTopic("cfg-kp", 1, 3)])
    ck = AdminClient({"bootstrap.servers": kafka_bs})
    resource = ConfigResource(
        ResourceType.TOPIC,
        "cfg-ck",
        incremental_configs=[
            ConfigEntry("retention.ms", "7200000", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    for future in ck.incremental_alter_configs([resource]).values():
        future.result(timeout=60)
    assert wait_for("the change", lambda: overrides(bs, "cfg-ck").get("retention.ms") == "7200000")
    kp = KafkaAdminClient(bootstrap_servers=kafka_bs, request_timeout_ms=30_000)
    try:
        kp.alter_configs(
            [KafkaConfigResource(ConfigResourceType.TOPIC, "cfg-kp", {"segment.ms": "600000"})]
        )
    finally:
        kp.close()
    assert overrides(bs, "cfg-kp") == {"segment.ms": "600000"}
