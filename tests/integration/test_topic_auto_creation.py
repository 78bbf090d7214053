"""Producing to a topic that does not exist, on one node: with auto.create.topics.enable on
(the default) kafka-python's, confluent-kafka's and rillet's producers create it with the
node's num.partitions and default.replication.factor and their records arrive; with it off
each fails within about a second, saying the topic is unknown (kafka-python can only say
so by its max_block_ms running out, as against Kafka itself)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from node_process import NodeProcess

from rillet.client import BlockingAdmin, BlockingProducer
from rillet.client.errors import UnknownTopicOrPartitionError

pytestmark = [
    pytest.mark.integration,
    # kafka-python reads its bundled JSON schemas with a deprecated importlib call.
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
PARTITIONS = 3
FAIL_FAST_S = 1.0
SLACK_S = 1.0  # a shared CI machine's scheduling noise on top of the second
KAFKA_LISTENER = "[kafka_listener]\nenabled = true\nport = 0\n"


def _start(node_factory: Callable[..., NodeProcess], auto_create: bool) -> tuple[NodeProcess, str]:
    node = node_factory(
        KAFKA_LISTENER + f"[topics]\nauto_create_topics_enable = {str(auto_create).lower()}\n"
        f"num_partitions = {PARTITIONS}\ndefault_replication_factor = 1\n"
    ).start()
    ready = json.loads((node.log_dir / f"ready-{node.starts}.json").read_text())
    return node, f"127.0.0.1:{ready['kafka_port']}"


def test_producers_to_a_new_topic_create_it(node_factory: Callable[..., NodeProcess]) -> None:
    from confluent_kafka import Producer
    from kafka import KafkaProducer

    node, kafka_bootstrap = _start(node_factory, auto_create=True)
    kp = KafkaProducer(bootstrap_servers=kafka_bootstrap, max_block_ms=10_000)
    try:
        kp.send("auto-kp", b"one").get(timeout=10)
    finally:
        kp.close()
    delivered: list[Any] = []
    ck = Producer({"bootstrap.servers": kafka_bootstrap})
    ck.produce("auto-ck", b"one", on_delivery=lambda err, msg: delivered.append(err))
    assert ck.flush(10) == 0 and delivered == [None]
    with BlockingProducer(node.bootstrap, max_block_ms=10_000) as native:
        native.send("auto-native", b"one").result(10)
    with BlockingAdmin(node.bootstrap) as admin:
        described = {
            t.name: t for t in admin.describe_topics(["auto-kp", "auto-ck", "auto-native"])
        }
    assert sorted(described) == ["auto-ck", "auto-kp", "auto-native"]
    for topic in described.values():
        assert len(topic.partitions) == PARTITIONS, topic
        assert all(p.replicas == [1] and p.leader == 1 for p in topic.partitions), topic


def test_producers_fail_fast_when_auto_creation_is_off(
    node_factory: Callable[..., NodeProcess],
) -> None:
    from confluent_kafka import KafkaError, Producer
    from kafka import KafkaProducer
    from kafka.errors import KafkaTimeoutError

    node, kafka_bootstrap = _start(node_factory, auto_create=False)
    with BlockingProducer(node.bootstrap, max_block_ms=30_000) as native:
        started = time.monotonic()
        with pytest.raises(UnknownTopicOrPartitionError) as refused:
            native.send("off-native", b"one").result(10)
        assert time.monotonic() - started < FAIL_FAST_S
    assert "'off-native'" in str(refused.value)
    assert "auto.create.topics.enable" in str(refused.value)

    delivered: list[Any] = []
    ck = Producer({"bootstrap.servers": kafka_bootstrap, "topic.metadata.propagation.max.ms": 200})
    started = time.monotonic()
    ck.produce("off-ck", b"one", on_delivery=lambda err, msg: delivered.append(err))
    ck.flush(10)
    assert time.monotonic() - started < FAIL_FAST_S + SLACK_S
    (error,) = delivered
    assert error.code() in (KafkaError._UNKNOWN_TOPIC, KafkaError.UNKNOWN_TOPIC_OR_PART), error

    kp = KafkaProducer(bootstrap_servers=kafka_bootstrap, max_block_ms=int(FAIL_FAST_S * 1000))
    try:
        started = time.monotonic()
        with pytest.raises(KafkaTimeoutError):
            kp.send("off-kp", b"one")
        assert time.monotonic() - started < FAIL_FAST_S + SLACK_S
    finally:
        kp.close()
    with BlockingAdmin(node.bootstrap) as admin:
        assert not {"off-native", "off-ck", "off-kp"} & set(admin.list_topics())
