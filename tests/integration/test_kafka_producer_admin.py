"""DescribeProducers (61) and WriteTxnMarkers (27) on the Kafka listener, as Kafka's admin
clients use them (kafka-python's KafkaAdminClient here; ``kafka-transactions`` in the
differential test): a partition leader lists a producer with its open transaction, and an
administrator's abort marker ends it, so the last stable offset moves on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
TIMEOUT_S = 30
TOPIC = "hanging"


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with LocalCluster(plan_cluster(tmp_path_factory.mktemp("producer-admin"), 1)) as c:
        c.start()
        yield c.plan.kafka_bootstrap


def _committed_values(bootstrap: str) -> list[bytes]:
    """What a read_committed consumer reads from partition 0 (to where it reports the end)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "reader",
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
        }
    )
    consumer.assign([TopicPartition(TOPIC, 0, OFFSET_BEGINNING)])
    values: list[bytes] = []
    try:
        for _ in range(100):
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            error = msg.error()
            if error is not None and error.code() == KafkaError._PARTITION_EOF:
                return values
            if error is None:
                values.append(msg.value() or b"")
    finally:
        consumer.close()
    raise AssertionError(f"no end of partition 0 reported; read {values}")


def test_an_open_transaction_is_described_and_aborted_by_an_administrator(bootstrap: str) -> None:
    from confluent_kafka import Producer
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.admin import NewTopic
    from kafka.admin._transactions import AbortTransactionSpec

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_S * 1000)
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
        txn = Producer({"bootstrap.servers": bootstrap, "transactional.id": "stuck"})
        txn.init_transactions(TIMEOUT_S)
        txn.begin_transaction()
        for value in (b"open-1", b"open-2"):
            txn.produce(TOPIC, value=value, partition=0)
        assert txn.flush(TIMEOUT_S) == 0
        plain = Producer({"bootstrap.servers": bootstrap})
        plain.produce(TOPIC, value=b"after", partition=0)
        assert plain.flush(TIMEOUT_S) == 0
        assert _committed_values(bootstrap) == []  # the open transaction holds the LSO at 0

        tp = TopicPartition(TOPIC, 0)
        described = admin.describe_producers([tp])[tp].active_producers
        open_ones = [p for p in described if p.current_transaction_start_offset >= 0]
        (producer,) = open_ones
        assert producer.current_transaction_start_offset == 0
        assert producer.last_timestamp > 0 and producer.last_sequence == 1

        admin.abort_transaction(
            AbortTransactionSpec(tp, producer.producer_id, producer.producer_epoch)
        )
        after = admin.describe_producers([tp])[tp].active_producers
        assert all(p.current_transaction_start_offset == -1 for p in after), after
        assert _committed_values(bootstrap) == [b"after"]  # aborted records skipped
    finally:
        admin.close()
