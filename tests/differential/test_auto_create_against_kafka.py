"""Topic auto-creation against a real Kafka 4.4 broker: Kafka's console producer (the Java
producer), kafka-python and confluent-kafka each produce to a topic that does not exist, on
Kafka and on rillet, both with auto.create.topics.enable on (Kafka's default) and
num.partitions 2; each topic is created on both, with 2 partitions, holding the records.

The suite's shared brokers run with auto-creation off (conftest.py), so this module starts a
Kafka broker and a one-node rillet of its own; without Java, Maven or Maven Central it is
skipped with the reason.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from broker_pair import Broker
from real_kafka import KafkaUnavailable, RealKafka, ensure_jars

from rillet.launcher.local_cluster import LocalCluster, plan_cluster

PARTITIONS = 2
RECORDS = 20
TIMEOUT_S = 30
PRODUCER = "org.apache.kafka.tools.ConsoleProducer"

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # kafka-python's schemas


@pytest.fixture(scope="module")
def creating_brokers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Broker]]:
    try:
        jars = ensure_jars()
    except KafkaUnavailable as exc:
        pytest.skip(f"no real Kafka broker: {exc}")
    properties = {"num.partitions": str(PARTITIONS)}
    plan = plan_cluster(
        tmp_path_factory.mktemp("rillet-auto"), 1, http=False, num_partitions=PARTITIONS
    )
    work = tmp_path_factory.mktemp("real-kafka-auto")
    with RealKafka(jars, work_dir=work, properties=properties) as kafka, LocalCluster(plan) as c:
        c.start()
        yield [
            Broker("kafka", kafka.bootstrap, 1, kafka.log_tail),
            Broker("rillet", plan.kafka_bootstrap, 1, lambda: c.log_tail(1, 30)),
        ]


def _java_producer(tools: Path, bootstrap: str, topic: str) -> None:
    lines = "".join(f"v{i}\n" for i in range(RECORDS))
    cmd = ["java", "-XX:TieredStopAtLevel=1", "-cp", f"{tools}/*", PRODUCER]
    cmd += ["--bootstrap-server", bootstrap, "--topic", topic]
    cmd += ["--command-property", "acks=all", "--command-property", "max.block.ms=20000"]
    done = subprocess.run(cmd, input=lines, capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stderr


def _kafka_python_producer(bootstrap: str, topic: str) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", max_block_ms=20_000)
    try:
        for i in range(RECORDS):
            producer.send(topic, f"v{i}".encode())
        producer.flush(TIMEOUT_S)
    finally:
        producer.close()


def _confluent_producer(bootstrap: str, topic: str) -> None:
    from confluent_kafka import Producer

    errors: list[object] = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i in range(RECORDS):
        producer.produce(topic, f"v{i}".encode(), on_delivery=lambda e, m: e and errors.append(e))
    assert producer.flush(TIMEOUT_S) == 0 and errors == []


def _partitions_and_records(bootstrap: str, topic: str) -> tuple[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-probe"})
    try:
        described = consumer.list_topics(topic, timeout=TIMEOUT_S).topics[topic]
        assert described.error is None, described.error
        ends = [
            consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=TIMEOUT_S)
            for p in described.partitions
        ]
        return len(described.partitions), sum(high - low for low, high in ends)
    finally:
        consumer.close()


def test_producing_to_a_new_topic_creates_it_on_both(
    creating_brokers: list[Broker], tools: Path, topic: str
) -> None:
    observed = {}
    for b in creating_brokers:
        _java_producer(tools, b.bootstrap, f"{topic}-java")
        _kafka_python_producer(b.bootstrap, f"{topic}-kp")
        _confluent_producer(b.bootstrap, f"{topic}-ck")
        observed[b.name] = {
            name: _partitions_and_records(b.bootstrap, f"{topic}-{name}")
            for name in ("java", "kp", "ck")
        }
    expected = {name: (PARTITIONS, RECORDS) for name in ("java", "kp", "ck")}
    assert observed == {"kafka": expected, "rillet": expected}
