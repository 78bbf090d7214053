"""The blocking facade: plain calls from ordinary threads, loud failures on misuse."""

from __future__ import annotations

import concurrent.futures

import pytest
from client_fakes import FakeClusterThread

from rillet.client import (
    BlockingAdmin,
    BlockingConsumer,
    BlockingProducer,
    NewTopic,
    TopicPartition,
)
from rillet.client.errors import ClientClosedError, RilletError, UnknownTopicOrPartitionError

TP = TopicPartition("b", 0)


def test_produce_and_consume_without_trio() -> None:
    with FakeClusterThread() as fake:
        bootstrap = fake.cluster.bootstrap
        with BlockingAdmin(bootstrap) as admin:
            admin.create_topics([NewTopic("b", 2)])
            assert admin.list_topics() == ["b"]
            assert len(admin.describe_topics(["b"])[0].partitions) == 2
        with BlockingProducer(bootstrap, linger_ms=1, retry_backoff_ms=5) as producer:
            futures = [producer.send("b", f"v{i}".encode(), partition=0) for i in range(20)]
            producer.flush()
            assert isinstance(futures[0], concurrent.futures.Future)
            assert [f.result(timeout=5).offset for f in futures] == list(range(20))
            assert producer.partitions_for("b") == [0, 1]
            with pytest.raises(UnknownTopicOrPartitionError):
                producer.send("b", b"x", partition=5)
        with BlockingConsumer(bootstrap, fetch_max_wait_ms=20) as consumer:
            consumer.assign([TP])
            assert consumer.assignment() == {TP}
            consumer.seek(TP, 15)
            got: list[bytes | None] = []
            for _ in range(100):
                got.extend(r.value for r in consumer.poll(timeout_ms=100))
                if len(got) >= 5:
                    break
            assert got == [f"v{i}".encode() for i in range(15, 20)]
            assert consumer.position(TP) == 20
            assert consumer.end_offsets([TP]) == {TP: 20}
            assert consumer.beginning_offsets([TP]) == {TP: 0}
            consumer.seek_to_beginning(TP)
            assert consumer.position(TP) == 0


def test_use_after_close_fails_loudly() -> None:
    with FakeClusterThread() as fake:
        admin = BlockingAdmin(fake.cluster.bootstrap)
        admin.close()
        with pytest.raises(ClientClosedError):
            admin.list_topics()
        admin.close()  # closing twice is harmless


def test_bad_options_fail_in_the_constructor() -> None:
    with pytest.raises(ValueError, match="acks"):
        BlockingProducer("127.0.0.1:1", acks=2)


async def test_blocking_clients_refuse_to_run_inside_trio() -> None:
    with pytest.raises(RilletError, match="inside trio"):
        BlockingAdmin("127.0.0.1:1")
