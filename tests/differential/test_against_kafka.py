"""The same client scenarios against a real Apache Kafka 4.x broker and against rillet.

Each test runs one scenario on both brokers and asserts that what the clients observe is
equal: offsets, ListOffsets answers, error codes, group assignments, committed offsets and
record bytes. Where rillet deliberately differs from Kafka, the test says so and asserts the
documented difference (docs/kafka-compatibility.md, "Differential tests against Apache
Kafka").
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from broker_pair import Broker
from cluster_checks import wait_for

pytestmark = [
    # kafka-python reads its bundled JSON schemas with a deprecated importlib call.
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
TIMEOUT_S = 30
T = TypeVar("T")


def on_both(brokers: list[Broker], scenario: Callable[[Broker], T]) -> dict[str, T]:
    results = {}
    for b in brokers:
        try:
            results[b.name] = scenario(b)
        except Exception as exc:
            exc.add_note(f"on {b.name}; its log ends:\n{b.log_tail()}")
            raise
    return results


def assert_same(results: dict[str, Any]) -> Any:
    assert results["rillet"] == results["kafka"], results
    return results["kafka"]


# -- helpers ---------------------------------------------------------------------------------


def create_topic(b: Broker, topic: str, partitions: int, **configs: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    new = NewTopic(topic, partitions, b.replication_factor, config=configs)
    admin.create_topics([new])[topic].result(timeout=TIMEOUT_S)
    wait_for(
        f"{topic}'s leaders on {b.name}",
        lambda: (
            (t := admin.list_topics(topic, timeout=TIMEOUT_S).topics.get(topic)) is not None
            and t.error is None
            and len(t.partitions) == partitions
            and all(p.leader >= 0 for p in t.partitions.values())
        ),
    )


def leader_address(b: Broker, topic: str, partition: int) -> str:
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": b.bootstrap}).list_topics(topic, timeout=TIMEOUT_S)
    broker = md.brokers[md.topics[topic].partitions[partition].leader]
    return f"{broker.host}:{broker.port}"


def producer(b: Broker, **conf: Any) -> Any:
    from confluent_kafka import Producer

    return Producer({"bootstrap.servers": b.bootstrap, "acks": "all", "linger.ms": 0, **conf})


def produce_confluent(b: Broker, topic: str, records: list[dict[str, Any]]) -> list[Any]:
    """Produce one at a time (each flushed): the delivery reports, as (error, part, offset)."""
    p = producer(b, **{"enable.idempotence": True})
    reports: list[Any] = []
    for r in records:
        p.produce(
            topic,
            on_delivery=lambda err, msg: reports.append(
                (err.code() if err else None, msg.partition(), msg.offset())
            ),
            **r,
        )
        assert p.flush(TIMEOUT_S) == 0
    return reports


class RawKafka:
    """One connection speaking Kafka's protocol through kafka-python's message classes."""

    def __init__(self, address: str) -> None:
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=TIMEOUT_S)
        self.correlation_id = 0

    def __enter__(self) -> RawKafka:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    def call(self, request: Any, version: int, response_type: Any) -> Any:
        self.correlation_id += 1
        request.with_header(correlation_id=self.correlation_id, client_id="differential")
        self.sock.sendall(bytes(request.encode(version=version, header=True, framed=True)))
        size = struct.unpack(">i", self._read(4))[0]
        data = struct.pack(">i", size) + self._read(size)
        return response_type.decode(data, version=version, header=True, framed=True)

    def _read(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            assert chunk, "connection closed early"
            data += chunk
        return data


def raw_fetch(conn: RawKafka, topic: str, partition: int, offset: int) -> tuple[int, int]:
    from kafka.protocol.consumer import FetchRequest, FetchResponse

    f = FetchRequest
    request = f(
        replica_id=-1,
        max_wait_ms=10,
        min_bytes=1,
        max_bytes=1 << 20,
        isolation_level=1,
        topics=[
            f.FetchTopic(
                topic=topic,
                partitions=[
                    f.FetchTopic.FetchPartition(
                        partition=partition, fetch_offset=offset, partition_max_bytes=1 << 20
                    )
                ],
            )
        ],
    )
    (part,) = conn.call(request, 11, FetchResponse).responses[0].partitions
    return part.error_code, part.high_watermark


def raw_produce(conn: RawKafka, topic: str, partition: int) -> int:
    from kafka.protocol.producer import ProduceRequest, ProduceResponse

    from rillet.wire import batch

    p = ProduceRequest
    request = p(
        transactional_id=None,
        acks=-1,
        timeout_ms=TIMEOUT_S * 1000,
        topic_data=[
            p.TopicProduceData(
                name=topic,
                partition_data=[
                    p.TopicProduceData.PartitionProduceData(
                        index=partition,
                        records=batch.build_batch([(int(time.time() * 1000), b"k", b"v", None)]),
                    )
                ],
            )
        ],
    )
    (answer,) = conn.call(request, 7, ProduceResponse).responses[0].partition_responses
    return int(answer.error_code)


def raw_list_offset(conn: RawKafka, topic: str, partition: int, timestamp: int) -> int:
    from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse

    lo = ListOffsetsRequest
    request = lo(
        replica_id=-1,
        isolation_level=0,
        topics=[
            lo.ListOffsetsTopic(
                name=topic,
                partitions=[
                    lo.ListOffsetsTopic.ListOffsetsPartition(
                        partition_index=partition, timestamp=timestamp
                    )
                ],
            )
        ],
    )
    (found,) = conn.call(request, 5, ListOffsetsResponse).topics[0].partitions
    return int(found.error_code)


# -- scenarios -------------------------------------------------------------------------------


def test_offsets_assigned_to_a_produced_sequence(brokers: list[Broker], topic: str) -> None:
    def scenario(b: Broker) -> Any:
        from kafka import KafkaProducer

        create_topic(b, topic, 2)
        confluent = produce_confluent(
            b, topic, [{"value": b"c%d" % i, "partition": i % 2} for i in range(7)]
        )
        kp = KafkaProducer(bootstrap_servers=b.bootstrap, acks="all", enable_idempotence=True)
        try:
            futures = [kp.send(topic, b"k%d" % i, partition=i % 2) for i in range(5)]
            kafka_python = [(f.get(TIMEOUT_S).partition, f.get(TIMEOUT_S).offset) for f in futures]
        finally:
            kp.close(TIMEOUT_S)
        return confluent, kafka_python

    confluent, kafka_python = assert_same(on_both(brokers, scenario))
    assert [offset for _, _, offset in confluent] == [0, 0, 1, 1, 2, 2, 3]
    assert kafka_python[:2] == [(0, 4), (1, 3)]


def test_list_offsets_earliest_latest_and_by_timestamp(brokers: list[Broker], topic: str) -> None:
    base_ms = (int(time.time()) - 600) * 1000  # ten minutes ago: both brokers accept it

    def scenario(b: Broker) -> Any:
        from confluent_kafka import Consumer
        from confluent_kafka import TopicPartition as ConfluentTP
        from kafka import KafkaConsumer, TopicPartition

        create_topic(b, topic, 1)
        produce_confluent(
            b,
            topic,
            [{"value": b"v%d" % i, "timestamp": base_ms + 1000 * i} for i in range(5)],
        )
        consumer = KafkaConsumer(bootstrap_servers=b.bootstrap, enable_auto_commit=False)
        try:
            tp = TopicPartition(topic, 0)
            found = {}
            for name, ts in (
                ("exact", base_ms + 2000),
                ("between", base_ms + 2500),
                ("before", base_ms - 1),
                ("past the end", base_ms + 10_000),
            ):
                hit = consumer.offsets_for_times({tp: ts})[tp]
                found[name] = None if hit is None else (hit.offset, hit.timestamp - base_ms)
            kafka_python = (
                consumer.beginning_offsets([tp])[tp],
                consumer.end_offsets([tp])[tp],
                found,
            )
        finally:
            consumer.close()
        c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": f"{topic}-lo"})
        try:
            (past,) = c.offsets_for_times(
                [ConfluentTP(topic, 0, base_ms + 10_000)], timeout=TIMEOUT_S
            )
            low, high = c.get_watermark_offsets(ConfluentTP(topic, 0), timeout=TIMEOUT_S)
        finally:
            c.close()
        return kafka_python, (past.offset, low, high)

    kafka_python, confluent = assert_same(on_both(brokers, scenario))
    assert kafka_python == (
        0,
        5,
        {"exact": (2, 2000), "between": (3, 3000), "before": (0, 0), "past the end": None},
    )
    assert confluent == (-1, 0, 5)


def test_errors_for_bad_requests_on_the_wire(brokers: list[Broker], topic: str) -> None:
    def scenario(b: Broker) -> dict[str, Any]:
        create_topic(b, topic, 1)
        produce_confluent(b, topic, [{"value": b"x"}])
        with RawKafka(leader_address(b, topic, 0)) as conn:
            return {
                "produce to an unknown topic": raw_produce(conn, f"{topic}-none", 0),
                "produce to a bad partition": raw_produce(conn, topic, 7),
                "fetch an unknown topic": raw_fetch(conn, f"{topic}-none", 0, 0)[0],
                "fetch a bad partition": raw_fetch(conn, topic, 7, 0)[0],
                "fetch past the end": raw_fetch(conn, topic, 0, 1000),
                "fetch before the start": raw_fetch(conn, topic, 0, -5),
                "list offsets of a bad partition": raw_list_offset(conn, topic, 7, -1),
            }

    observed = on_both(brokers, scenario)
    # A documented difference: with OFFSET_OUT_OF_RANGE Kafka answers high watermark -1,
    # rillet the partition's real one (clients ignore it; they reset or fail).
    for name in ("fetch past the end", "fetch before the start"):
        assert observed["kafka"].pop(name) == (1, -1)  # OFFSET_OUT_OF_RANGE
        assert observed["rillet"].pop(name) == (1, 1)
    errors = assert_same(observed)
    assert errors["fetch an unknown topic"] == 3  # UNKNOWN_TOPIC_OR_PARTITION


def test_admin_errors(brokers: list[Broker], topic: str) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

    def error_of(b: Broker, new: Any) -> Any:
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        try:
            admin.create_topics([new])[new.topic].result(timeout=TIMEOUT_S)
        except KafkaException as exc:
            return exc.args[0].name()
        return None

    def first_error(futures: dict[str, Any]) -> Any:
        try:
            for f in futures.values():
                f.result(timeout=TIMEOUT_S)
        except KafkaException as exc:
            return exc.args[0].name()
        return None

    def scenario(b: Broker) -> dict[str, Any]:
        create_topic(b, topic, 2)
        rf = b.replication_factor
        admin = AdminClient({"bootstrap.servers": b.bootstrap})  # alive until answered
        return {
            "existing": error_of(b, NewTopic(topic, 1, rf)),
            "zero partitions": error_of(b, NewTopic(f"{topic}-0", 0, rf)),
            "zero replicas": error_of(b, NewTopic(f"{topic}-r", 1, 0)),
            "bad name": error_of(b, NewTopic("bad/name", 1, rf)),
            "delete an unknown topic": first_error(
                admin.delete_topics([f"{topic}-none"], operation_timeout=TIMEOUT_S)
            ),
            "fewer partitions": first_error(admin.create_partitions([NewPartitions(topic, 1)])),
        }

    answers = on_both(brokers, scenario)
    assert answers["kafka"]["fewer partitions"] == "INVALID_PARTITIONS"
    if answers["rillet"]["fewer partitions"] == "_UNSUPPORTED_FEATURE":
        # The Kafka listener does not serve CreatePartitions yet (the client sees it missing
        # from ApiVersions); once it does, the answers are compared like the others.
        for side in answers.values():
            side.pop("fewer partitions")
    observed = assert_same(answers)
    assert observed["existing"] == "TOPIC_ALREADY_EXISTS"
    assert observed["zero partitions"] == "INVALID_PARTITIONS"
    assert observed["delete an unknown topic"] == "UNKNOWN_TOPIC_OR_PART"


def test_offset_out_of_range_without_a_reset_policy(brokers: list[Broker], topic: str) -> None:
    def scenario(b: Broker) -> Any:
        from confluent_kafka import Consumer
        from confluent_kafka import TopicPartition as ConfluentTP
        from kafka import KafkaConsumer, TopicPartition

        create_topic(b, topic, 1)
        produce_confluent(b, topic, [{"value": b"v%d" % i} for i in range(3)])
        kc = KafkaConsumer(
            bootstrap_servers=b.bootstrap, auto_offset_reset="none", enable_auto_commit=False
        )
        tp = TopicPartition(topic, 0)
        try:
            kc.assign([tp])
            kc.seek(tp, 100)
            deadline = time.monotonic() + TIMEOUT_S
            kafka_python: Any = None
            while kafka_python is None and time.monotonic() < deadline:
                try:
                    kc.poll(timeout_ms=200)
                except Exception as exc:  # the error is what we compare
                    kafka_python = type(exc).__name__
        finally:
            kc.close()
        c = Consumer(
            {
                "bootstrap.servers": b.bootstrap,
                "group.id": f"{topic}-g",
                "auto.offset.reset": "error",
                "enable.auto.commit": False,
            }
        )
        try:
            c.assign([ConfluentTP(topic, 0, 100)])
            confluent = None
            deadline = time.monotonic() + TIMEOUT_S
            while confluent is None and time.monotonic() < deadline:
                msg = c.poll(0.2)
                if msg is not None and msg.error():
                    confluent = msg.error().name()
        finally:
            c.close()
        return kafka_python, confluent

    assert assert_same(on_both(brokers, scenario)) == (
        "OffsetOutOfRangeError",
        "_AUTO_OFFSET_RESET",
    )


def test_range_assignment_of_a_two_member_classic_group(brokers: list[Broker], topic: str) -> None:
    def scenario(b: Broker) -> Any:
        from kafka import KafkaConsumer
        from kafka.coordinator.assignors.range import RangePartitionAssignor

        create_topic(b, topic, 5)
        members = [
            KafkaConsumer(
                bootstrap_servers=b.bootstrap,
                group_id=f"{topic}-g",
                partition_assignment_strategy=[RangePartitionAssignor],
                enable_auto_commit=False,
                session_timeout_ms=10_000,
                heartbeat_interval_ms=500,
            )
            for _ in range(2)
        ]
        try:
            # kafka-python's leader assigns nothing for a topic its metadata lacks and, with
            # an empty assignment, never looks again: subscribe once both members know it.
            for m in members:
                wait_for(
                    f"{topic} in a member's metadata",
                    lambda m=m: len(m.partitions_for_topic(topic) or ()) == 5,
                )
                m.subscribe([topic])

            # Each member polls in its own thread, as applications run them: polled in turn
            # from one thread, one member sat out every rebalance the other started, and on
            # Kafka the leader once re-joined for a minute without the group settling.
            owned: list[list[int]] = [[], []]
            stop = threading.Event()

            def poll(i: int) -> None:
                while not stop.is_set():
                    members[i].poll(timeout_ms=100)
                    owned[i] = sorted(tp.partition for tp in members[i].assignment())

            threads = [threading.Thread(target=poll, args=(i,), daemon=True) for i in (0, 1)]
            for t in threads:
                t.start()

            def split() -> Any:
                parts = [list(p) for p in owned]
                seen.append(parts)
                done = all(parts) and sorted(p for ps in parts for p in ps) == list(range(5))
                return done and sorted(parts)

            seen: list[Any] = []
            try:
                return wait_for(f"two members on {b.name}", split, timeout_s=60)
            except AssertionError as exc:
                exc.add_note(f"the members' last assignments: {seen[-3:]}")
                raise
            finally:
                stop.set()
                for t in threads:
                    t.join(10)
        finally:
            for m in members:
                m.close()

    assert assert_same(on_both(brokers, scenario)) == [[0, 1, 2], [3, 4]]


def test_range_assignment_with_confluent_kafka(brokers: list[Broker], topic: str) -> None:
    def scenario(b: Broker) -> Any:
        from confluent_kafka import Consumer

        create_topic(b, topic, 5)
        members = [
            Consumer(
                {
                    "bootstrap.servers": b.bootstrap,
                    "group.id": f"{topic}-g",
                    "group.protocol": "classic",
                    "partition.assignment.strategy": "range",
                    "enable.auto.commit": False,
                    "session.timeout.ms": 10_000,
                    "heartbeat.interval.ms": 500,
                }
            )
            for _ in range(2)
        ]
        try:
            for m in members:
                m.subscribe([topic])

            def split() -> Any:
                for m in members:
                    m.poll(0.1)
                parts = [sorted(tp.partition for tp in m.assignment()) for m in members]
                seen.append(parts)
                done = all(parts) and sorted(p for ps in parts for p in ps) == list(range(5))
                return done and sorted(parts)

            seen: list[Any] = []
            try:
                return wait_for(f"two members on {b.name}", split, timeout_s=60)
            except AssertionError as exc:
                exc.add_note(f"the members' last assignments: {seen[-3:]}")
                raise
        finally:
            for m in members:
                m.close()

    assert assert_same(on_both(brokers, scenario)) == [[0, 1, 2], [3, 4]]


def test_delete_groups_errors_and_offsets(brokers: list[Broker], topic: str) -> None:
    """DeleteGroups: a group with a member is refused, an unknown one is not found, a group
    known by its offsets goes with them (committing again under the name starts afresh)."""

    def scenario(b: Broker) -> Any:
        from confluent_kafka import Consumer, TopicPartition
        from kafka import KafkaConsumer
        from kafka.admin import KafkaAdminClient

        create_topic(b, topic, 1)

        def commit(group: str, offset: int) -> None:
            c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": group})
            try:
                c.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
            finally:
                c.close()

        commit(f"{topic}-idle", 3)
        busy = KafkaConsumer(
            bootstrap_servers=b.bootstrap, group_id=f"{topic}-busy", enable_auto_commit=False
        )
        admin = KafkaAdminClient(bootstrap_servers=b.bootstrap)
        try:
            wait_for("the topic", lambda: busy.partitions_for_topic(topic))
            busy.subscribe([topic])
            wait_for(
                "a member", lambda: busy.poll(timeout_ms=200) is not None and busy.assignment()
            )
            names = [f"{topic}-idle", f"{topic}-busy", f"{topic}-nobody"]
            first = admin.delete_groups(names)
            commit(f"{topic}-idle", 4)
            reader = Consumer({"bootstrap.servers": b.bootstrap, "group.id": f"{topic}-idle"})
            try:
                again = reader.committed([TopicPartition(topic, 0)], timeout=TIMEOUT_S)
            finally:
                reader.close()
        finally:
            busy.close()
            admin.close()
        return (
            [first[n] for n in names],
            {tp.partition: tp.offset for tp in again},
        )

    assert assert_same(on_both(brokers, scenario)) == (
        ["OK", "NonEmptyGroupError", "GroupIdNotFoundError"],
        {0: 4},
    )


def test_committed_offsets_fetched_back(brokers: list[Broker], topic: str) -> None:
    def scenario(b: Broker) -> Any:
        from confluent_kafka import Consumer
        from confluent_kafka import TopicPartition as ConfluentTP
        from kafka import KafkaConsumer, TopicPartition
        from kafka.structs import OffsetAndMetadata

        create_topic(b, topic, 2)
        produce_confluent(b, topic, [{"value": b"v%d" % i, "partition": 0} for i in range(6)])
        group = f"{topic}-g"
        kc = KafkaConsumer(bootstrap_servers=b.bootstrap, group_id=group, enable_auto_commit=False)
        try:
            kc.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
            kc.commit({TopicPartition(topic, 0): OffsetAndMetadata(4, "meta", -1)})
        finally:
            kc.close()
        c = Consumer(
            {"bootstrap.servers": b.bootstrap, "group.id": group, "enable.auto.commit": False}
        )
        try:
            got = c.committed([ConfluentTP(topic, 0), ConfluentTP(topic, 1)], timeout=TIMEOUT_S)
            # (confluent-kafka 2.16 returns the commit's metadata with stray bytes after it,
            # from either broker; kafka-python reads it back below)
            confluent = [(tp.partition, tp.offset) for tp in got]
            c.commit(offsets=[ConfluentTP(topic, 1, 0)], asynchronous=False)
        finally:
            c.close()
        kc = KafkaConsumer(bootstrap_servers=b.bootstrap, group_id=group)
        try:
            back = [kc.committed(TopicPartition(topic, p), metadata=True) for p in (0, 1)]
        finally:
            kc.close()
        return confluent, back

    confluent, back = assert_same(on_both(brokers, scenario))
    assert confluent == [(0, 4), (1, -1001)]
    assert [(m.offset, m.metadata) for m in back] == [(4, "meta"), (0, "")]


def test_record_bytes_round_trip(brokers: list[Broker], topic: str) -> None:
    base_ms = (int(time.time()) - 60) * 1000
    records = [
        {"key": b"k0", "value": b"v0", "timestamp": base_ms},
        {"key": None, "value": b"no key", "timestamp": base_ms + 1},
        {"key": b"tombstone", "value": None, "timestamp": base_ms + 2},
        {"key": b"", "value": b"", "timestamp": base_ms + 3},
        {
            "key": b"\x00\xff" * 50,
            "value": bytes(range(256)) * 40,
            "headers": [("h", b"1"), ("h", b""), ("none", None), ("\u00e9t\u00e9", b"\x00")],
            "timestamp": base_ms + 4,
        },
    ]

    def scenario(b: Broker) -> Any:
        from confluent_kafka import Consumer
        from confluent_kafka import TopicPartition as ConfluentTP
        from kafka import KafkaConsumer, TopicPartition

        create_topic(b, topic, 1)
        produce_confluent(b, topic, [{**r, "partition": 0} for r in records])
        c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": f"{topic}-g"})
        confluent: list[Any] = []
        try:
            c.assign([ConfluentTP(topic, 0, 0)])
            deadline = time.monotonic() + TIMEOUT_S
            while len(confluent) < len(records) and time.monotonic() < deadline:
                msg = c.poll(0.2)
                if msg is not None and not msg.error():
                    confluent.append(
                        (msg.offset(), msg.key(), msg.value(), msg.headers(), msg.timestamp())
                    )
        finally:
            c.close()
        kc = KafkaConsumer(
            bootstrap_servers=b.bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
        )
        kafka_python: list[Any] = []
        try:
            kc.assign([TopicPartition(topic, 0)])
            deadline = time.monotonic() + TIMEOUT_S
            while len(kafka_python) < len(records) and time.monotonic() < deadline:
                for batch in kc.poll(timeout_ms=200).values():
                    kafka_python += [
                        (
                            r.offset,
                            r.key,
                            r.value,
                            list(r.headers),
                            (r.timestamp_type, r.timestamp),
                        )
                        for r in batch
                    ]
        finally:
            kc.close()
        return confluent, kafka_python

    confluent, kafka_python = assert_same(on_both(brokers, scenario))
    assert [(k, v, t) for _, k, v, _, t in confluent] == [
        (r["key"], r["value"], (1, r["timestamp"])) for r in records
    ]
    assert [h for *_, h, _ in confluent][4] == records[4]["headers"]
    assert len(kafka_python) == len(records)


# -- documented differences ------------------------------------------------------------------


def test_old_timestamps_are_accepted_unless_a_topic_limits_them(
    brokers: list[Broker], topic: str
) -> None:
    """Both accept any past timestamp by default (message.timestamp.before.max.ms =
    Long.MAX) and refuse one older than a topic's own limit with INVALID_TIMESTAMP. (What
    retention then does differs on purpose: rillet keeps such a record retention.ms after
    it was written, Kafka deletes it once its segment rolls; docs/storage-format.md.)"""
    old_ms = 1_700_000_000_000  # 2023-11-14

    def scenario(b: Broker) -> Any:
        create_topic(b, topic, 1)
        create_topic(b, f"{topic}-day", 1, **{"message.timestamp.before.max.ms": "86400000"})
        refused = produce_confluent(b, f"{topic}-day", [{"value": b"old", "timestamp": old_ms}])
        return (
            produce_confluent(b, topic, [{"value": b"old", "timestamp": old_ms}]),
            [code for code, *_ in refused],
        )

    assert assert_same(on_both(brokers, scenario)) == ([(None, 0, 0)], [32])  # INVALID_TIMESTAMP


def test_no_auto_topic_creation_when_turned_off(brokers: list[Broker], topic: str) -> None:
    """With auto.create.topics.enable off (both of the suite's brokers), asking for a topic
    that does not exist answers UNKNOWN_TOPIC_OR_PART and creates nothing."""
    from confluent_kafka.admin import AdminClient

    def scenario(b: Broker) -> Any:
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        missing = admin.list_topics(f"{topic}-nowhere", timeout=TIMEOUT_S).topics
        return {name: t.error.name() if t.error else None for name, t in missing.items()}

    assert assert_same(on_both(brokers, scenario)) == {f"{topic}-nowhere": "UNKNOWN_TOPIC_OR_PART"}
