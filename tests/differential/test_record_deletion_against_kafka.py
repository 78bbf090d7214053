"""DeleteRecords on both brokers, through confluent-kafka's and kafka-python's admin clients:
the low watermarks answered, a deletion below the log start changing nothing, the error for
an offset past the high watermark, -1 deleting up to it, and the watermarks readers see."""

from __future__ import annotations

from typing import Any

from broker_pair import Broker
from test_against_kafka import TIMEOUT_S, assert_same, create_topic, on_both, produce_confluent


def test_delete_records(brokers: list[Broker], topic: str) -> None:
    def scenario(b: Broker) -> Any:
        from confluent_kafka import Consumer, KafkaException
        from confluent_kafka import TopicPartition as ConfluentTP
        from confluent_kafka.admin import AdminClient
        from kafka import TopicPartition
        from kafka.admin import KafkaAdminClient

        create_topic(b, topic, 2)
        produce_confluent(b, topic, [{"value": b"v%d" % i, "partition": i % 2} for i in range(20)])
        admin = AdminClient({"bootstrap.servers": b.bootstrap})

        def delete(partition: int, offset: int) -> Any:
            (future,) = admin.delete_records([ConfluentTP(topic, partition, offset)]).values()
            try:
                return future.result(timeout=TIMEOUT_S).low_watermark
            except KafkaException as exc:
                return exc.args[0].name()

        confluent = [delete(0, 4), delete(0, 2), delete(0, 11), delete(0, -1)]
        kp = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=30_000)
        try:
            answer = kp.delete_records({TopicPartition(topic, 1): 7})
            kafka_python = answer[TopicPartition(topic, 1)]["low_watermark"]
        finally:
            kp.close()
        c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": f"{topic}-wm"})
        try:
            marks = [c.get_watermark_offsets(ConfluentTP(topic, p), TIMEOUT_S) for p in (0, 1)]
        finally:
            c.close()
        return confluent, kafka_python, marks

    confluent, kafka_python, marks = assert_same(on_both(brokers, scenario))
    assert confluent == [4, 4, "OFFSET_OUT_OF_RANGE", 10]
    assert kafka_python == 7
    assert marks == [(10, 10), (7, 10)]
