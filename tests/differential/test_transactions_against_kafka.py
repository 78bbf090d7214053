"""Transactions on Kafka 4.4 and on rillet alike, driven by confluent-kafka (librdkafka):
one transactional producer commits and aborts transactions interleaved across 3 partitions,
each also committing a consumer group's offset (send_offsets_to_transaction); a
read_committed consumer sees exactly the committed records, a read_uncommitted one sees
them all, and the group's offset is the last committed transaction's
(docs/transactions.md)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from broker_pair import Broker
from test_kafka_tools import run_tool

TIMEOUT_S = 30
PARTITIONS = 3
# Which of the interleaved transactions commit (the others abort).
OUTCOMES = [True, False, True, True, False]


def _create_topic(broker: Broker, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    new = NewTopic(topic, PARTITIONS, replication_factor=broker.replication_factor)
    admin.create_topics([new])[topic].result(TIMEOUT_S)


def _produce(broker: Broker, topic: str) -> tuple[list[bytes], list[bytes], int]:
    """(committed values, every value written, the group's committed offset) after the
    transactions ran; transaction n commits offset n + 1 of partition 0 for the group."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    producer = Producer(
        {"bootstrap.servers": broker.bootstrap, "transactional.id": f"{topic}-producer"}
    )
    group = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"{topic}-app"})
    producer.init_transactions(TIMEOUT_S)
    committed: list[bytes] = []
    written: list[bytes] = []
    for n, commit in enumerate(OUTCOMES):
        producer.begin_transaction()
        for p in range(PARTITIONS):
            for i in range(2):
                value = f"t{n}-p{p}-{i}".encode()
                producer.produce(topic, value=value, partition=p)
                written.append(value)
                if commit:
                    committed.append(value)
        producer.send_offsets_to_transaction(
            [TopicPartition(topic, 0, n + 1)], group.consumer_group_metadata(), TIMEOUT_S
        )
        # Sent before the end: an abort would drop records librdkafka still holds.
        assert producer.flush(TIMEOUT_S) == 0
        if commit:
            producer.commit_transaction(TIMEOUT_S)
        else:
            producer.abort_transaction(TIMEOUT_S)
    try:
        (offset,) = group.committed([TopicPartition(topic, 0)], TIMEOUT_S)
    finally:
        group.close()
    return committed, written, offset.offset


def _read(broker: Broker, topic: str, isolation: str, expected: int) -> list[bytes]:
    """Every value up to the end of each partition (at least ``expected`` of them)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": f"{topic}-{isolation}",
            "enable.auto.commit": False,
            "isolation.level": isolation,
            "enable.partition.eof": True,
        }
    )
    got: list[bytes] = []
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        at_end: set[int] = set()
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline and (len(at_end) < PARTITIONS or len(got) < expected):
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            if msg.error() is not None:  # the end of a partition: the only event expected
                at_end.add(msg.partition())
                continue
            at_end.discard(msg.partition())
            got.append(msg.value())
    finally:
        consumer.close()
    return sorted(got)


def test_read_committed_sees_exactly_the_committed_transactions(
    brokers: list[Broker], topic: str
) -> None:
    seen: dict[str, tuple[list[bytes], list[bytes], int]] = {}
    for broker in brokers:
        _create_topic(broker, topic)
        committed, written, offset = _produce(broker, topic)
        assert len(committed) == 18 and len(written) == 30
        seen[broker.name] = (
            _read(broker, topic, "read_committed", len(committed)),
            _read(broker, topic, "read_uncommitted", len(written)),
            offset,
        )
        expected = (sorted(committed), sorted(written), 4)  # transaction 3 committed last
        assert seen[broker.name] == expected, broker.log_tail()
    assert seen["rillet"] == seen["kafka"]


TRANSACTIONS_TOOL = "org.apache.kafka.tools.TransactionsCommand"


@pytest.mark.skipif(
    os.environ.get("RILLET_TRANSACTION_TOOLS") != "1",
    reason="four JVM tool runs (~30 s): set RILLET_TRANSACTION_TOOLS=1 to run",
)
def test_kafka_transactions_lists_and_describes_an_open_transaction(
    tools: Path, brokers: list[Broker], topic: str
) -> None:
    """``kafka-transactions list`` and ``describe`` show an open transaction alike (producer
    ids differ between the brokers; states and partitions do not)."""
    from confluent_kafka import Producer

    shown: dict[str, tuple[list[str], list[str]]] = {}
    for broker in brokers:
        _create_topic(broker, topic)
        txn_id = f"{topic}-open"
        producer = Producer(
            {
                "bootstrap.servers": broker.bootstrap,
                "transactional.id": txn_id,
                "transaction.timeout.ms": 60000,
            }
        )
        producer.init_transactions(TIMEOUT_S)
        producer.begin_transaction()
        producer.produce(topic, value=b"open", partition=1)
        assert producer.flush(TIMEOUT_S) == 0
        try:
            listed = run_tool(
                tools, TRANSACTIONS_TOOL, "--bootstrap-server", broker.bootstrap, "list"
            )
            described = run_tool(
                tools,
                TRANSACTIONS_TOOL,
                "--bootstrap-server",
                broker.bootstrap,
                "describe",
                "--transactional-id",
                txn_id,
            )
        finally:
            producer.abort_transaction(TIMEOUT_S)
        rows = [line.split() for line in listed.splitlines()[1:] if txn_id in line]
        (row,) = rows
        (detail,) = [line.split() for line in described.splitlines()[1:] if line.strip()]
        # list: TransactionalId Coordinator ProducerId TransactionState
        # describe: CoordinatorId TransactionalId ProducerId ProducerEpoch TransactionState
        #           CurrentTransactionStartTimeMs TransactionDurationMs TopicPartitions
        shown[broker.name] = (
            [row[0], row[3]],
            [detail[1], detail[4], detail[-1]],
        )
        assert shown[broker.name] == (
            [txn_id, "Ongoing"],
            [txn_id, "Ongoing", f"{topic}-1"],
        ), (listed, described, broker.log_tail())
    assert shown["rillet"] == shown["kafka"]


@pytest.mark.skipif(
    os.environ.get("RILLET_TRANSACTION_TOOLS") != "1",
    reason="JVM tool runs: set RILLET_TRANSACTION_TOOLS=1 to run",
)
def test_kafka_transactions_describes_producers_and_aborts_an_open_transaction(
    tools: Path, brokers: list[Broker], topic: str
) -> None:
    """``kafka-transactions describe-producers`` shows the open transaction's start offset
    (DescribeProducers), ``find-hanging`` finds none (the coordinator knows it), and
    ``abort --start-offset`` (WriteTxnMarkers from the admin client) ends it, so a
    read_committed reader gets past it to the record written after it: alike on both."""
    from confluent_kafka import Producer

    shown: dict[str, tuple[list[str], list[str], list[bytes]]] = {}
    for broker in brokers:
        _create_topic(broker, topic)
        server = ("--bootstrap-server", broker.bootstrap)
        # Open for the whole test: JVM tool runs take minutes on a loaded machine, longer than
        # the default transaction.timeout.ms after which the coordinator would abort it.
        txn = Producer(
            {
                "bootstrap.servers": broker.bootstrap,
                "transactional.id": f"{topic}-h",
                "transaction.timeout.ms": 600_000,
            }
        )
        txn.init_transactions(TIMEOUT_S)
        txn.begin_transaction()
        txn.produce(topic, value=b"open", partition=0)
        assert txn.flush(TIMEOUT_S) == 0
        plain = Producer({"bootstrap.servers": broker.bootstrap})
        plain.produce(topic, value=b"after", partition=0)
        assert plain.flush(TIMEOUT_S) == 0
        part = ("--topic", topic, "--partition", "0")
        described = run_tool(tools, TRANSACTIONS_TOOL, *server, "describe-producers", *part)
        hanging = run_tool(
            tools,
            TRANSACTIONS_TOOL,
            *server,
            "find-hanging",
            *part,
            "--max-transaction-timeout",
            "0",
        )
        run_tool(tools, TRANSACTIONS_TOOL, *server, "abort", *part, "--start-offset", "0")
        read = _read(broker, topic, "read_committed", 1)
        # describe-producers: ProducerId ProducerEpoch LatestCoordinatorEpoch LastSequence
        #                     LastTimestamp CurrentTransactionStartOffset
        (row,) = [line.split() for line in described.splitlines()[1:] if line.strip()]
        shown[broker.name] = (
            [row[1], row[3], row[5]],
            [line for line in hanging.splitlines()[1:] if line.strip()],
            read,
        )
        assert shown[broker.name] == (["0", "0", "0"], [], [b"after"]), (
            described,
            hanging,
            broker.log_tail(),
        )
    assert shown["rillet"] == shown["kafka"]
