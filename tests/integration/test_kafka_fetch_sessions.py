"""Fetch sessions (KIP-227) with a real Kafka client: kafka-python consuming 60 partitions of
one node opens a session, then sends incremental fetches that name only the partitions it
moved and get back only those with news (counted by the node's /metrics)."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_checks import wait_for
from prometheus_client.parser import text_string_to_metric_families

from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
TIMEOUT_S = 30
PARTITIONS = 60


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(plan_cluster(tmp_path, 1)) as c:
        c.start()
        yield c


def _samples(cluster: LocalCluster) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    url = cluster.plan.nodes[0].http_url("/metrics")
    with urllib.request.urlopen(url, timeout=10) as resp:
        text = resp.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name.startswith("rillet_kafka_")
    }


def test_a_consumer_of_many_partitions_sends_incremental_fetches(cluster: LocalCluster) -> None:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic

    bootstrap = cluster.plan.kafka_bootstrap
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_S * 1000)
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, fetch_max_wait_ms=100)
    try:
        admin.create_topics([NewTopic("sessions", PARTITIONS, 1)])
        wait_for("the topic", lambda: "sessions" in admin.list_topics())
        for p in range(PARTITIONS):
            producer.send("sessions", b"v", partition=p)
        producer.flush(TIMEOUT_S)
        partitions = [TopicPartition("sessions", p) for p in range(PARTITIONS)]
        consumer.assign(partitions)
        consumer.seek_to_beginning()
        seen: set[int] = set()

        def consumed_all() -> bool:
            for records in consumer.poll(timeout_ms=200).values():
                seen.update(r.partition for r in records)
            return len(seen) == PARTITIONS

        wait_for("every partition's record", consumed_all, TIMEOUT_S)
        # The next fetch names all 60 (each position moved); then a quiet stretch, and one
        # new record: incremental fetches name and answer next to nothing, and deliver it.
        for _ in range(3):
            assert not consumer.poll(timeout_ms=100)
        before = _samples(cluster)
        for _ in range(5):
            assert not consumer.poll(timeout_ms=100)
        producer.send("sessions", b"late", partition=17).get(TIMEOUT_S)
        late: list[bytes] = []

        def got_late() -> bool:
            late.extend(r.value for rs in consumer.poll(timeout_ms=200).values() for r in rs)
            return bool(late)

        wait_for("the late record", got_late, TIMEOUT_S)
        assert late == [b"late"]
        after = _samples(cluster)
    finally:
        consumer.close()
        producer.close()
        admin.close()

    def delta(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    incremental = delta("rillet_kafka_fetches_total", kind="incremental")
    assert incremental >= 5
    assert delta("rillet_kafka_fetches_total", kind="full") == 0  # the session held
    assert delta("rillet_kafka_fetches_total", kind="refused") == 0
    assert after[("rillet_kafka_fetch_sessions", ())] >= 1
    assert after[("rillet_kafka_fetch_session_partitions", ())] >= PARTITIONS
    # Without sessions every fetch names and answers all 60 partitions.
    named = delta("rillet_kafka_incremental_fetch_partitions_named_total")
    answered = delta("rillet_kafka_incremental_fetch_partitions_answered_total")
    assert named <= 2 * incremental, (named, incremental)
    assert 1 <= answered <= 2 * incremental, (answered, incremental)
