"""Kafka's consumer group protocol (KIP-848, ``group.protocol=consumer``) on a real one-node
cluster's Kafka listener, with librdkafka (confluent-kafka) as the client: server-side
assignment shared by two members, then by a classic member too, taken over by one when the
others leave, and the group described through ConsumerGroupDescribe."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

TOPIC, GROUP, PARTITIONS = "kip848-orders", "kip848-group", 6
TIMEOUT_S = 30


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base: Path = tmp_path_factory.mktemp("kip848")
    with LocalCluster(plan_cluster(base, 1)) as c:
        c.start()
        yield c.plan.kafka_bootstrap


def _consumer(bootstrap: str, name: str, protocol: str = "consumer") -> Any:
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": GROUP,
            "group.protocol": protocol,
            "client.id": name,
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([TOPIC])
    return consumer


def _until(what: str, consumers: list[Any], done: Any) -> None:
    """Poll every consumer (their callbacks run in poll) until ``done()`` holds."""
    deadline = time.monotonic() + TIMEOUT_S
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {TIMEOUT_S}s waiting for {what}")
        for c in consumers:
            c.poll(0.05)


def _owned(consumer: Any) -> set[int]:
    return {tp.partition for tp in consumer.assignment() if tp.topic == TOPIC}


def test_consumer_protocol_and_classic_members_split_partitions_and_one_takes_all(
    bootstrap: str,
) -> None:
    import confluent_kafka
    from confluent_kafka.admin import AdminClient, NewTopic

    assert confluent_kafka.libversion()[1] >= 0x020A0000  # KIP-848 GA in librdkafka 2.10
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(TIMEOUT_S)
    a = _consumer(bootstrap, "member-a")
    b = c = None
    try:
        _until("a owning every partition", [a], lambda: len(_owned(a)) == PARTITIONS)
        b = _consumer(bootstrap, "member-b")
        both = [a, b]
        _until(
            "a and b splitting the partitions",
            both,
            lambda: (
                len(_owned(a)) == len(_owned(b)) == PARTITIONS // 2 and not _owned(a) & _owned(b)
            ),
        )
        (future,) = admin.describe_consumer_groups([GROUP]).values()
        described = future.result(TIMEOUT_S)
        assert described.type == confluent_kafka.ConsumerGroupType.CONSUMER
        members = {m.client_id: m for m in described.members}
        assert set(members) == {"member-a", "member-b"}
        assert {tp.partition for tp in members["member-b"].assignment.topic_partitions} == (
            _owned(b)
        )
        # A classic (JoinGroup) member joins the consumer group: the server assigns for it.
        c = _consumer(bootstrap, "member-c", "classic")
        _until(
            "a, b and the classic c owning two partitions each",
            [a, b, c],
            lambda: [len(_owned(x)) for x in (a, b, c)] == [2, 2, 2],
        )
        assert len(_owned(a) | _owned(b) | _owned(c)) == PARTITIONS
        for gone in (b, c):
            gone.close()
        b = c = None
        _until("a taking every partition back", [a], lambda: len(_owned(a)) == PARTITIONS)
    finally:
        for x in (a, b, c):
            if x is not None:
                x.close()
