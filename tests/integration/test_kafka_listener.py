"""The Kafka-protocol listener on a real 3-node cluster, driven by Kafka's own clients.

One cluster serves the whole module (its start-up dominates the run time); each test uses
its own topic.
"""

from __future__ import annotations

import json
import shutil
import socket
import struct
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_checks import raft_leader, wait_for
from kafka_quorum_request import describe_quorum_request
from prometheus_client.parser import text_string_to_metric_families

from rillet.launcher.local_cluster import LocalCluster, plan_cluster
from rillet.wire import batch

pytestmark = [
    pytest.mark.integration,
    # kafka-python reads its bundled JSON schemas with a deprecated importlib call.
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
TIMEOUT_S = 30


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    base = tmp_path_factory.mktemp("kafka-cluster")
    # (A log cleaner that looks often: test_librdkafka_reads_a_compacted_topic_across_its_gaps.)
    extra = "broker_session_timeout_ms = 3000\n\n[tasks]\nlog_cleaner_backoff_ms = 100\n"
    with LocalCluster(plan_cluster(base, 3, extra)) as c:
        c.start()
        yield c


@pytest.fixture
def bootstrap(cluster: LocalCluster) -> str:
    return cluster.plan.kafka_bootstrap


def test_kafka_python_admin_creates_describes_and_deletes_topics(
    cluster: LocalCluster, bootstrap: str
) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_S * 1000)
    try:
        described = admin.describe_cluster()
        assert {b["broker_id"]: b["port"] for b in described["brokers"]} == {
            n.node_id: n.kafka_port for n in cluster.plan.nodes
        }
        assert described["cluster_id"] == cluster.plan.cluster_id
        admin.create_topics([NewTopic("kp-admin", 3, 3)])
        wait_for("the topic", lambda: "kp-admin" in admin.list_topics())
        (topic,) = admin.describe_topics(["kp-admin"])
        assert topic["error_code"] == 0 and len(topic["partitions"]) == 3
        assert all(len(p["replica_nodes"]) == 3 for p in topic["partitions"])
        admin.delete_topics(["kp-admin"])
        wait_for("the deletion", lambda: "kp-admin" not in admin.list_topics())
    finally:
        admin.close()


def test_confluent_kafka_creates_a_topic_and_lists_its_offsets(bootstrap: str) -> None:
    from confluent_kafka import KafkaError, KafkaException, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic("ck-admin", num_partitions=2, replication_factor=3)])
    futures["ck-admin"].result(timeout=TIMEOUT_S)
    metadata = wait_for(
        "the topic's leaders",
        lambda: (
            (md := admin.list_topics(timeout=TIMEOUT_S)).topics.get("ck-admin") is not None
            and all(p.leader >= 0 for p in md.topics["ck-admin"].partitions.values())
            and md
        ),
    )
    assert len(metadata.brokers) == 3 and metadata.controller_id > 0
    assert sorted(metadata.topics["ck-admin"].partitions) == [0, 1]

    def earliest() -> int | None:
        # A node named leader may not have taken the partition up yet: NOT_LEADER is
        # retriable, as for any Kafka client.
        tp = TopicPartition("ck-admin", 0)
        try:
            found = admin.list_offsets({tp: OffsetSpec.earliest()}, request_timeout=TIMEOUT_S)
            return int(found[tp].result(timeout=TIMEOUT_S).offset)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.NOT_LEADER_FOR_PARTITION:
                raise
            return None

    assert wait_for("the earliest offset", earliest) == 0


def test_bad_input_closes_only_that_connection(cluster: LocalCluster, bootstrap: str) -> None:
    host, port = bootstrap.split(",", maxsplit=1)[0].split(":")
    with socket.create_connection((host, int(port)), timeout=TIMEOUT_S) as sock:
        sock.sendall(struct.pack(">i", 12) + b"\x00\x03\x00\x01garbage!")
        assert sock.recv(64) == b""  # closed
    with socket.create_connection((host, int(port)), timeout=TIMEOUT_S) as sock:
        # ApiVersions v9 (above ours): error 35 and the table in v0 format.
        sock.sendall(struct.pack(">ihhih", 10, 18, 9, 42, -1))
        size = struct.unpack(">i", _read(sock, 4))[0]
        body = _read(sock, size)
        assert struct.unpack(">ih", body[:6]) == (42, 35)
    assert "closing kafka connection" in cluster.log_tail(1, 200) + cluster.log_tail(
        2, 200
    ) + cluster.log_tail(3, 200)
    assert all(cluster.alive(n.node_id) for n in cluster.plan.nodes)


def _read(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        assert chunk, "connection closed early"
        data += chunk
    return data


def test_cluster_up_prints_the_kafka_bootstrap_line_before_the_native_one(
    tmp_path: Path,
) -> None:
    argv = [sys.executable, "-m", "rillet.cli.main", "cluster"]
    base = ["--data-dir", str(tmp_path / "c")]
    up = subprocess.run(
        [*argv, "up", "--nodes", "1", *base],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    try:
        assert up.returncode == 0, up.stderr
        lines = up.stdout.strip().splitlines()
        assert lines[-1].startswith("bootstrap servers: ")
        assert lines[-2].startswith("kafka bootstrap servers: 127.0.0.1:")
        again = subprocess.run(
            [*argv, "up", "--nodes", "1", *base],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert again.stdout.splitlines()[-2:] == [
            lines[-2],
            f"cluster in {tmp_path / 'c'} is already running: {lines[-1].split()[-1]}",
        ]
    finally:
        subprocess.run([*argv, "down", *base], check=False, capture_output=True, timeout=60)


class RawKafka:
    """One connection speaking Kafka's protocol through kafka-python's message classes."""

    def __init__(self, address: str) -> None:
        host, port = address.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=TIMEOUT_S)
        self.correlation_id = 0

    def call(self, request: Any, version: int, response_type: Any) -> Any:
        self.correlation_id += 1
        request.with_header(correlation_id=self.correlation_id, client_id="raw")
        self.sock.sendall(bytes(request.encode(version=version, header=True, framed=True)))
        size = struct.unpack(">i", _read(self.sock, 4))[0]
        data = struct.pack(">i", size) + _read(self.sock, size)
        response = response_type.decode(data, version=version, header=True, framed=True)
        assert response._header.correlation_id == self.correlation_id
        return response

    def close(self) -> None:
        self.sock.close()


def _leader_address(cluster: LocalCluster, bootstrap: str, topic: str) -> str:
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_S * 1000)
    try:
        leader = wait_for(
            "a leader",
            lambda: next(
                (
                    p["leader_id"]
                    for t in admin.describe_topics([topic])
                    for p in t["partitions"]
                    if p["leader_id"] >= 0
                ),
                None,
            ),
        )
    finally:
        admin.close()
    return cluster.plan.node(leader).kafka_bootstrap


def test_batches_produced_and_fetched_over_the_kafka_protocol_are_byte_identical(
    cluster: LocalCluster, bootstrap: str
) -> None:
    """Produce (acks=all) and Fetch through the Kafka listener with rillet's own batches:
    the bytes stored are the bytes sent; ListOffsets finds them by position and time."""
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.protocol.consumer import (
        FetchRequest,
        FetchResponse,
        ListOffsetsRequest,
        ListOffsetsResponse,
    )
    from kafka.protocol.producer import ProduceRequest, ProduceResponse

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_S * 1000)
    try:
        admin.create_topics([NewTopic("raw", 1, 3)])
    finally:
        admin.close()
    conn = RawKafka(_leader_address(cluster, bootstrap, "raw"))
    try:
        # Create times a minute ago: any past time would do (as in Kafka).
        t0_ms = int(time.time() * 1000) - 60_000
        sent = [
            batch.build_batch([(t0_ms + 1_000 * (i + 1), b"k%d" % i, b"v%d" % i, None)])
            for i in range(3)
        ]
        p = ProduceRequest
        for i, data in enumerate(sent):
            request = p(
                transactional_id=None,
                acks=-1,
                timeout_ms=TIMEOUT_S * 1000,
                topic_data=[
                    p.TopicProduceData(
                        name="raw",
                        partition_data=[
                            p.TopicProduceData.PartitionProduceData(index=0, records=data)
                        ],
                    )
                ],
            )
            response = conn.call(request, 7, ProduceResponse)
            (answer,) = response.responses[0].partition_responses
            assert (answer.error_code, answer.base_offset) == (0, i)
        f = FetchRequest
        fetch = f(
            replica_id=-1,
            max_wait_ms=100,
            min_bytes=1,
            max_bytes=1 << 20,
            isolation_level=0,
            topics=[
                f.FetchTopic(
                    topic="raw",
                    partitions=[
                        f.FetchTopic.FetchPartition(
                            partition=0, fetch_offset=1, partition_max_bytes=1 << 20
                        )
                    ],
                )
            ],
        )
        fetched = conn.call(fetch, 11, FetchResponse)
        (part,) = fetched.responses[0].partitions
        assert (part.error_code, part.high_watermark, part.last_stable_offset) == (0, 3, 3)
        assert part.preferred_read_replica == -1
        stored = [bytearray(b) for b in sent[1:]]
        for offset, b in enumerate(stored, start=1):
            batch.assign_offset_and_epoch(
                b, 0, offset, batch.read_header(part.records).leader_epoch
            )
        assert bytes(part.records) == b"".join(stored)
        lo = ListOffsetsRequest
        for timestamp, offset in ((-2, 0), (-1, 3), (t0_ms + 2_000, 1), (t0_ms + 10_000, -1)):
            request = lo(
                replica_id=-1,
                isolation_level=0,
                topics=[
                    lo.ListOffsetsTopic(
                        name="raw",
                        partitions=[
                            lo.ListOffsetsTopic.ListOffsetsPartition(
                                partition_index=0, timestamp=timestamp
                            )
                        ],
                    )
                ],
            )
            (found,) = conn.call(request, 5, ListOffsetsResponse).topics[0].partitions
            assert (found.error_code, found.offset) == (0, offset), timestamp
    finally:
        conn.close()


def _create(bootstrap: str, topic: str, partitions: int = 1) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_S * 1000)
    try:
        admin.create_topics([NewTopic(topic, partitions, 3)])
    finally:
        admin.close()


RECORDS = [(b"k%d" % i, b"value-%d" % i) for i in range(20)]


def test_kafka_python_produces_idempotently_and_consumes_with_assign(bootstrap: str) -> None:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    _create(bootstrap, "kp-data")
    producer = KafkaProducer(
        bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, linger_ms=5
    )
    try:
        futures = [producer.send("kp-data", value=v, key=k, partition=0) for k, v in RECORDS]
        offsets = [f.get(timeout=TIMEOUT_S).offset for f in futures]
    finally:
        producer.close()
    assert offsets == list(range(len(RECORDS)))
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition("kp-data", 0)])
        consumer.seek(TopicPartition("kp-data", 0), 5)  # mid-batch: the batch comes whole
        got: list[tuple[int, bytes, bytes]] = []

        def poll() -> bool:
            for records in consumer.poll(timeout_ms=500).values():
                got.extend((r.offset, r.key, r.value) for r in records)
            return len(got) >= len(RECORDS) - 5

        wait_for("the records", poll, TIMEOUT_S)
    finally:
        consumer.close()
    assert got == [(i, k, v) for i, (k, v) in enumerate(RECORDS)][5:]


def test_confluent_kafka_produces_idempotently_and_consumes_with_assign(bootstrap: str) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition

    _create(bootstrap, "ck-data")
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
    delivered: list[tuple[int, bytes, bytes]] = []

    def on_delivery(err: Any, msg: Any) -> None:
        assert err is None, err
        delivered.append((msg.offset(), msg.key(), msg.value()))

    for k, v in RECORDS:
        producer.produce("ck-data", value=v, key=k, partition=0, on_delivery=on_delivery)
    assert producer.flush(TIMEOUT_S) == 0
    assert sorted(delivered) == [(i, k, v) for i, (k, v) in enumerate(RECORDS)]
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False}
    )
    try:
        consumer.assign([TopicPartition("ck-data", 0, 0)])
        got: list[tuple[int, bytes, bytes]] = []

        def poll() -> bool:
            msg = consumer.poll(0.5)
            if msg is not None:
                assert msg.error() is None, msg.error()
                got.append((msg.offset(), msg.key(), msg.value()))
            return len(got) >= len(RECORDS)

        wait_for("the records", poll, TIMEOUT_S)
    finally:
        consumer.close()
    assert got == [(i, k, v) for i, (k, v) in enumerate(RECORDS)]


def test_aiokafka_produces_idempotently_and_consumes_with_assign(bootstrap: str) -> None:
    import asyncio

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    _create(bootstrap, "ak-data")

    async def run() -> list[tuple[int, bytes | None, bytes | None]]:
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap, acks="all", enable_idempotence=True
        )
        await producer.start()
        try:
            for k, v in RECORDS:
                await producer.send_and_wait("ak-data", value=v, key=k, partition=0)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        await consumer.start()
        try:
            tp = TopicPartition("ak-data", 0)
            consumer.assign([tp])
            consumer.seek(tp, 0)
            got = []
            async with asyncio.timeout(TIMEOUT_S):
                while len(got) < len(RECORDS):
                    batch_ = await consumer.getmany(tp, timeout_ms=500)
                    got.extend((r.offset, r.key, r.value) for r in batch_.get(tp, []))
            return got
        finally:
            await consumer.stop()

    got = asyncio.run(run())
    assert got == [(i, k, v) for i, (k, v) in enumerate(RECORDS)]


def test_records_cross_between_rillet_s_client_and_kafka_clients_byte_identical(
    cluster: LocalCluster, bootstrap: str
) -> None:
    from kafka import KafkaConsumer, KafkaProducer
    from kafka import TopicPartition as KafkaTP

    from rillet.client import BlockingConsumer, BlockingProducer, TopicPartition

    _create(bootstrap, "cross")
    headers = [("h", b"\x00\xffbin")]
    with BlockingProducer(cluster.bootstrap) as producer:
        producer.send("cross", b"from-rillet\x00", key=b"rk", headers=headers, partition=0).result(
            timeout=TIMEOUT_S
        )
    kp = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        kp.send("cross", value=b"from-kafka\xff", key=b"kk", headers=headers, partition=0).get(
            timeout=TIMEOUT_S
        )
    finally:
        kp.close()
    expected = [(b"rk", b"from-rillet\x00"), (b"kk", b"from-kafka\xff")]
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        consumer.assign([KafkaTP("cross", 0)])
        consumer.seek(KafkaTP("cross", 0), 0)
        got: list[Any] = []

        def poll() -> bool:
            for records in consumer.poll(timeout_ms=500).values():
                got.extend(records)
            return len(got) >= 2

        wait_for("kafka-python reading both", poll, TIMEOUT_S)
    finally:
        consumer.close()
    assert [(r.key, r.value) for r in got] == expected
    assert all(list(r.headers) == headers for r in got)
    with BlockingConsumer(cluster.bootstrap) as rc:
        rc.assign([TopicPartition("cross", 0)])
        rc.seek(TopicPartition("cross", 0), 0)
        seen: list[Any] = []
        wait_for("rillet reading both", lambda: seen.extend(rc.poll(500)) or len(seen) >= 2)
    assert [(r.key, r.value) for r in seen] == expected
    assert all(list(r.headers) == headers for r in seen)


def test_kafka_clients_commit_and_fetch_offsets_of_assigned_partitions(bootstrap: str) -> None:
    """Offsets committed by confluent-kafka are read back by kafka-python and the reverse
    (a consumer using ``assign`` commits as member "" of generation -1)."""
    import confluent_kafka
    import kafka
    from kafka.structs import OffsetAndMetadata

    _create(bootstrap, "offsets", partitions=2)
    ck = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "ledger", "enable.auto.commit": False}
    )
    kp = kafka.KafkaConsumer(
        bootstrap_servers=bootstrap, group_id="ledger", enable_auto_commit=False
    )
    try:
        ck.commit(offsets=[confluent_kafka.TopicPartition("offsets", 0, 17)], asynchronous=False)
        tp0, tp1 = kafka.TopicPartition("offsets", 0), kafka.TopicPartition("offsets", 1)
        assert kp.committed(tp0) == 17
        kp.commit({tp1: OffsetAndMetadata(23, "from kafka-python", -1)})
        committed = ck.committed(
            [confluent_kafka.TopicPartition("offsets", p) for p in (0, 1)], timeout=TIMEOUT_S
        )
        assert [(c.partition, c.offset) for c in committed] == [(0, 17), (1, 23)]
        # librdkafka hands the metadata over without a terminating NUL and the Python
        # binding reads it as a C string, so bytes from its heap may follow (seen in CI:
        # "from kafka-pythoncorrelation_id...", and once bytes that are not UTF-8, which
        # the binding fails to decode); the node's answer is checked whole through
        # kafka-python below.
        try:
            seen_by_librdkafka = committed[1].metadata or ""
        except UnicodeDecodeError:
            seen_by_librdkafka = None  # the binding's own read past the end, not the node's
        assert seen_by_librdkafka is None or seen_by_librdkafka.startswith("from kafka-python")
        read_back = kp.committed(tp1, metadata=True)
        assert read_back is not None and read_back.metadata == "from kafka-python"
    finally:
        ck.close()
        kp.close()


KCAT = shutil.which("kcat")
needs_kcat = pytest.mark.skipif(KCAT is None, reason="kcat is not installed (Debian: kcat)")


def _kcat(bootstrap: str, *args: str, stdin: str | None = None) -> str:
    assert KCAT is not None
    done = subprocess.run(
        [KCAT, "-b", bootstrap, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S * 2,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@needs_kcat
def test_kcat_lists_brokers_and_topics(cluster: LocalCluster, bootstrap: str) -> None:
    _create(bootstrap, "kcat-meta", partitions=2)
    listing = json.loads(_kcat(bootstrap, "-L", "-J", "-t", "kcat-meta"))
    assert sorted(b["id"] for b in listing["brokers"]) == [1, 2, 3]
    assert {b["name"] for b in listing["brokers"]} == {
        n.kafka_bootstrap for n in cluster.plan.nodes
    }
    (topic,) = listing["topics"]
    assert topic["topic"] == "kcat-meta" and len(topic["partitions"]) == 2


@needs_kcat
def test_kcat_produces_and_consumes(bootstrap: str) -> None:
    _create(bootstrap, "kcat-data")
    lines = [f"line-{i}" for i in range(10)]
    _kcat(bootstrap, "-P", "-t", "kcat-data", "-p", "0", stdin="\n".join(lines) + "\n")
    out = _kcat(bootstrap, "-C", "-t", "kcat-data", "-p", "0", "-o", "beginning", "-e", "-q")
    assert out.splitlines() == lines


KAFKA_MEMBER = Path(__file__).resolve().parent.parent / "support" / "kafka_group_member.py"
GROUP_SESSION_MS = 3000


class KafkaMembers:
    """Group member processes; every one is killed when the test ends."""

    def __init__(self, base: Path, client: str, bootstrap: str, group: str, topic: str) -> None:
        self.base, self.args = base, [client, bootstrap, group, topic]
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str) -> None:
        out = self.base / f"{name}.jsonl"
        with open(self.base / f"{name}.err", "wb") as err:
            self.procs[name] = subprocess.Popen(
                [sys.executable, str(KAFKA_MEMBER), *self.args, str(out), str(GROUP_SESSION_MS)],
                stdout=subprocess.DEVNULL,
                stderr=err,
            )

    def kill(self, name: str) -> None:
        self.procs[name].kill()
        self.procs[name].wait(10)

    def kill_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)

    def received(self) -> dict[str, list[tuple[int, int, str]]]:
        out: dict[str, list[tuple[int, int, str]]] = {}
        for name in self.procs:
            path = self.base / f"{name}.jsonl"
            lines = path.read_text().splitlines() if path.exists() else []
            rows = [json.loads(line) for line in lines if line.endswith("}")]
            out[name] = [(r["p"], r["o"], r["v"]) for r in rows]
        return out


def _wait_for_stable_group(bootstrap: str, group: str, size: int) -> None:
    """DescribeGroups until the group is Stable with ``size`` members, each assigned."""
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_S * 1000)
    try:

        def stable() -> bool:
            described = admin.describe_groups([group])[group]
            return described["group_state"] == "Stable" and len(described["members"]) == size

        wait_for(f"{size} members in a stable group", stable, 60)
    finally:
        admin.close()


def _produce(bootstrap: str, topic: str, values: list[str], partitions: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i, v in enumerate(values):
        producer.produce(topic, value=v.encode(), partition=i % partitions)
    assert producer.flush(TIMEOUT_S) == 0


@pytest.mark.parametrize("client", ["confluent-kafka", "kafka-python", "aiokafka"])
def test_a_killed_group_member_s_partitions_move_to_the_others(
    tmp_path: Path, bootstrap: str, client: str
) -> None:
    """Three Kafka-client members share a topic through the classic group protocol; after
    one is SIGKILLed, its partitions move to the other two within a session timeout and
    every record is delivered (at least once)."""
    topic, partitions = f"grp-{client}", 6
    _create(bootstrap, topic, partitions)
    members = KafkaMembers(tmp_path, client, bootstrap, f"g-{client}", topic)
    try:
        for name in ("a", "b", "c"):
            members.start(name)
        _wait_for_stable_group(bootstrap, f"g-{client}", 3)

        def all_of(values: list[str]) -> dict[str, list[tuple[int, int, str]]] | None:
            got = members.received()
            seen = {v for rows in got.values() for _, _, v in rows}
            return got if seen >= set(values) else None

        # Who owns a partition: who received its latest record. A member may still rejoin
        # once after the group first looked stable (kafka-python does when its metadata
        # changes), and the others then read its partitions meanwhile; another round of
        # records shows the assignment the group settled on.
        for attempt in range(5):
            if attempt:  # a member was still (re)joining: let the group settle again first
                _wait_for_stable_group(bootstrap, f"g-{client}", 3)
            first = [f"first-{attempt}-{i}" for i in range(60)]
            _produce(bootstrap, topic, first, partitions)
            got = wait_for("the first records", lambda values=first: all_of(values), 60)
            latest: dict[int, tuple[int, str]] = {}
            for name, rows in got.items():
                for p, offset, _ in rows:
                    if p not in latest or offset > latest[p][0]:
                        latest[p] = (offset, name)
            owners = {p: name for p, (_, name) in latest.items()}
            if len(set(owners.values())) == 3:
                break
        assert len(set(owners.values())) == 3, "every member got partitions"
        killed = "a"
        moved = {p for p, name in owners.items() if name == killed}
        members.kill(killed)
        second = [f"second-{i}" for i in range(60)]
        _produce(bootstrap, topic, second, partitions)
        got = wait_for("the second records", lambda: all_of(second), 60)
        after = {
            p: name for name, rows in got.items() for p, _, v in rows if v.startswith("second")
        }
        assert killed not in after.values()
        assert moved and moved <= set(after)
    finally:
        members.kill_all()


def test_the_kafka_clients_bench_prints_one_json_line(
    cluster: LocalCluster, bootstrap: str
) -> None:
    """A tiny run: the script keeps working as the listener evolves (figures not checked)."""
    script = Path(__file__).resolve().parents[2] / "bench" / "kafka_clients.py"
    argv = ["--bootstrap", cluster.bootstrap, "--kafka-bootstrap", bootstrap]
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            *argv,
            "--num-records",
            "300",
            "--clients",
            "confluent-kafka,rillet",
            "--latency-rate",
            "500",
            "--latency-seconds",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    figures = json.loads(line)
    assert figures["bench"] == "kafka_clients"
    assert set(figures["given"]) == {"confluent-kafka", "rillet", "e2e_latency"}


def test_acks_0_gets_no_answer_and_a_failed_one_closes_the_connection(
    cluster: LocalCluster, bootstrap: str
) -> None:
    from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse
    from kafka.protocol.producer import ProduceRequest

    _create(bootstrap, "acks0")
    leader = _leader_address(cluster, bootstrap, "acks0")
    follower = next(n.kafka_bootstrap for n in cluster.plan.nodes if n.kafka_bootstrap != leader)
    p = ProduceRequest
    produce = p(
        transactional_id=None,
        acks=0,
        timeout_ms=1000,
        topic_data=[
            p.TopicProduceData(
                name="acks0",
                partition_data=[
                    p.TopicProduceData.PartitionProduceData(
                        index=0,
                        records=batch.build_batch([(int(time.time() * 1000), None, b"v", None)]),
                    )
                ],
            )
        ],
    )
    lo = ListOffsetsRequest
    latest = lo(
        replica_id=-1,
        isolation_level=0,
        topics=[
            lo.ListOffsetsTopic(
                name="acks0",
                partitions=[
                    lo.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, timestamp=-1)
                ],
            )
        ],
    )
    conn = RawKafka(leader)
    try:
        conn.correlation_id += 1
        produce.with_header(correlation_id=conn.correlation_id, client_id="raw")
        conn.sock.sendall(bytes(produce.encode(version=7, header=True, framed=True)))

        def written() -> bool:
            (found,) = conn.call(latest, 5, ListOffsetsResponse).topics[0].partitions
            return bool(found.offset == 1)  # the next answer is ListOffsets': none for acks=0

        wait_for("the acks=0 record", written)
    finally:
        conn.close()
    wrong = RawKafka(follower)
    try:
        produce.with_header(correlation_id=1, client_id="raw")
        wrong.sock.sendall(bytes(produce.encode(version=7, header=True, framed=True)))
        assert wrong.sock.recv(16) == b""  # NOT_LEADER_OR_FOLLOWER: closed, no answer
    finally:
        wrong.close()


def test_kafka_admins_describe_a_topic_s_configs(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    created = admin.create_topics([NewTopic("configured", 1, 3, config={"retention.ms": "123456"})])
    created["configured"].result(timeout=TIMEOUT_S)
    resource = ConfigResource(ConfigResource.Type.TOPIC, "configured")
    configs = admin.describe_configs([resource])[resource].result(timeout=TIMEOUT_S)
    assert configs["retention.ms"].value == "123456" and not configs["retention.ms"].is_default
    assert configs["min.insync.replicas"].is_default


def test_compressed_batches_from_librdkafka_are_stored_as_sent_and_read_by_rillet(
    cluster: LocalCluster, bootstrap: str
) -> None:
    from confluent_kafka import Producer

    from rillet.client import BlockingConsumer, TopicPartition

    _create(bootstrap, "compressed")
    codecs = ["gzip", "snappy", "lz4", "zstd"]
    for codec in codecs:
        producer = Producer(
            {"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 20}
        )
        for i in range(5):
            producer.produce("compressed", value=f"{codec}-{i}".encode() * 20, partition=0)
        assert producer.flush(TIMEOUT_S) == 0
    expected = [f"{codec}-{i}".encode() * 20 for codec in codecs for i in range(5)]
    with BlockingConsumer(cluster.bootstrap) as consumer:
        consumer.assign([TopicPartition("compressed", 0)])
        consumer.seek(TopicPartition("compressed", 0), 0)
        seen: list[Any] = []
        wait_for(
            "every record", lambda: seen.extend(consumer.poll(500)) or len(seen) >= len(expected)
        )
    assert [r.value for r in seen] == expected


def test_offset_for_leader_epoch_answers_where_the_epoch_ends(
    cluster: LocalCluster, bootstrap: str
) -> None:
    from kafka.protocol.consumer.offsets import (
        OffsetForLeaderEpochRequest,
        OffsetForLeaderEpochResponse,
    )

    _create(bootstrap, "epochs")
    _produce(bootstrap, "epochs", ["a", "b", "c"], 1)
    r = OffsetForLeaderEpochRequest

    def ask(leader_epoch: int, current: int) -> tuple[int, int, int]:
        request = r(
            replica_id=-1,
            topics=[
                r.OffsetForLeaderTopic(
                    topic="epochs",
                    partitions=[
                        r.OffsetForLeaderTopic.OffsetForLeaderPartition(
                            partition=0, current_leader_epoch=current, leader_epoch=leader_epoch
                        )
                    ],
                )
            ],
        )
        (p,) = conn.call(request, 3, OffsetForLeaderEpochResponse).topics[0].partitions
        return p.error_code, p.leader_epoch, p.end_offset

    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_S * 1000)
    try:
        ((partition,),) = [t["partitions"] for t in admin.describe_topics(["epochs"])]
    finally:
        admin.close()
    epoch = partition["leader_epoch"]
    conn = RawKafka(cluster.plan.node(partition["leader_id"]).kafka_bootstrap)
    try:
        assert ask(epoch, epoch) == (0, epoch, 3)  # the current epoch ends at the log end
        assert ask(epoch, -1) == (0, epoch, 3)
        assert ask(epoch + 1, -1) == (0, -1, -1)  # an epoch this log never saw
        assert ask(epoch, epoch + 1)[0] == 75  # UNKNOWN_LEADER_EPOCH: the asker is ahead
    finally:
        conn.close()


def test_librdkafka_reads_a_compacted_topic_across_its_gaps(bootstrap: str) -> None:
    """Kafka clients on a compacted topic: a record without a key is refused with
    INVALID_RECORD; once the background cleaner ran, the offsets of overwritten records are
    gaps (empty batches in the log) and every key's latest value is there, at its original
    offset (docs/compaction.md)."""
    from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    topic, keys, writes = "ck-compacted", 10, 300
    configs = {
        "cleanup.policy": "compact",
        "segment.bytes": "1024",
        "min.cleanable.dirty.ratio": "0.01",
    }
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 3, config=configs)])[topic].result(TIMEOUT_S)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    refused: list[Any] = []
    producer.produce(topic, b"no key", partition=0, on_delivery=lambda e, _: refused.append(e))
    assert producer.flush(TIMEOUT_S) == 0
    assert [e.code() for e in refused] == [KafkaError.INVALID_RECORD]
    for wave in range(0, writes, keys):  # one overwrite of every key per round trip
        for i in range(wave, wave + keys):
            producer.produce(topic, value=b"v%d" % i, key=b"k%d" % (i % keys), partition=0)
        assert producer.flush(TIMEOUT_S) == 0
    latest = {b"k%d" % (i % keys): (i, b"k%d" % (i % keys), b"v%d" % i) for i in range(writes)}

    def read_all() -> list[tuple[int, bytes, bytes]]:
        consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False}
        )
        rows: list[tuple[int, bytes, bytes]] = []
        try:
            consumer.assign([TopicPartition(topic, 0, 0)])
            deadline = time.monotonic() + TIMEOUT_S
            while not rows or rows[-1][0] < writes - 1:
                assert time.monotonic() < deadline, f"stuck after {rows[-1:]}"
                msg = consumer.poll(0.5)
                if msg is not None:
                    assert msg.error() is None, msg.error()
                    rows.append((msg.offset(), msg.key(), msg.value()))
        finally:
            consumer.close()
        return rows

    def cleaned() -> list[tuple[int, bytes, bytes]] | None:
        rows = read_all()
        return rows if len(rows) <= writes // 3 else None

    rows = wait_for("the cleaner", cleaned)
    assert {row[1]: row for row in rows} == latest
    assert all(row[2] == b"v%d" % row[0] for row in rows)  # original offsets


def _fetch_session_samples(cluster: LocalCluster) -> dict[tuple[str, tuple[Any, ...]], float]:
    """The fetch-session metrics, summed over the nodes."""
    out: dict[tuple[str, tuple[Any, ...]], float] = {}
    for node in cluster.plan.nodes:
        with urllib.request.urlopen(node.http_url("/metrics"), timeout=10) as resp:
            text = resp.read().decode()
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                if s.name.startswith("rillet_kafka_"):
                    key = (s.name, tuple(sorted(s.labels.items())))
                    out[key] = out.get(key, 0.0) + s.value
    return out


SESSION_PARTITIONS = 60


def test_a_consumer_of_many_partitions_sends_incremental_fetches(cluster: LocalCluster) -> None:
    """Fetch sessions (KIP-227): kafka-python consuming 60 partitions opens a session on each
    leader, then sends incremental fetches that name only the partitions it moved and get
    back only those with news (counted by the nodes' /metrics)."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic

    bootstrap = cluster.plan.kafka_bootstrap
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_S * 1000)
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, fetch_max_wait_ms=100)
    try:
        admin.create_topics([NewTopic("kafka-sessions", SESSION_PARTITIONS, 1)])
        wait_for("the topic", lambda: "kafka-sessions" in admin.list_topics())
        for p in range(SESSION_PARTITIONS):
            producer.send("kafka-sessions", b"v", partition=p)
        producer.flush(TIMEOUT_S)
        partitions = [TopicPartition("kafka-sessions", p) for p in range(SESSION_PARTITIONS)]
        consumer.assign(partitions)
        consumer.seek_to_beginning()
        seen: set[int] = set()

        def consumed_all() -> bool:
            for records in consumer.poll(timeout_ms=200).values():
                seen.update(r.partition for r in records)
            return len(seen) == SESSION_PARTITIONS

        wait_for("every partition's record", consumed_all, TIMEOUT_S)
        # The next fetch names all 60 (each position moved); then a quiet stretch, and one
        # new record: incremental fetches name and answer next to nothing, and deliver it.
        for _ in range(3):
            assert not consumer.poll(timeout_ms=100)
        before = _fetch_session_samples(cluster)
        for _ in range(5):
            assert not consumer.poll(timeout_ms=100)
        producer.send("kafka-sessions", b"late", partition=17).get(TIMEOUT_S)
        late: list[bytes] = []

        def got_late() -> bool:
            late.extend(r.value for rs in consumer.poll(timeout_ms=200).values() for r in rs)
            return bool(late)

        wait_for("the late record", got_late, TIMEOUT_S)
        assert late == [b"late"]
        after = _fetch_session_samples(cluster)
    finally:
        consumer.close()
        producer.close()
        admin.close()

    def delta(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    incremental = delta("rillet_kafka_fetches_total", kind="incremental")
    assert incremental >= len(cluster.plan.nodes)
    assert delta("rillet_kafka_fetches_total", kind="full") == 0  # the session held
    assert delta("rillet_kafka_fetches_total", kind="refused") == 0
    assert after[("rillet_kafka_fetch_sessions", ())] >= len(cluster.plan.nodes)
    assert after[("rillet_kafka_fetch_session_partitions", ())] >= SESSION_PARTITIONS
    # Without sessions every fetch names and answers all 60 partitions.
    named = delta("rillet_kafka_incremental_fetch_partitions_named_total")
    answered = delta("rillet_kafka_incremental_fetch_partitions_answered_total")
    assert named <= incremental, (named, incremental)
    assert 1 <= answered <= incremental, (answered, incremental)


def test_every_node_answers_describe_quorum_with_the_raft_leader_s_view(
    cluster: LocalCluster,
) -> None:
    """Kafka's admin client sends DescribeQuorum to a node of its choosing and Kafka
    forwards it to the active controller: a follower answers the leader's view too, every
    voter's log end known, not -1."""
    from kafka.protocol.admin import DescribeQuorumResponse

    request = describe_quorum_request()
    leader = wait_for("a Raft leader", lambda: raft_leader(cluster))
    assert len(cluster.plan.nodes) > 1
    for node in cluster.plan.nodes:  # the followers, and the leader
        conn = RawKafka(node.kafka_bootstrap)
        try:
            answer = conn.call(request, 2, DescribeQuorumResponse)
        finally:
            conn.close()
        [topic] = answer.topics
        [p] = topic.partitions
        assert (answer.error_code, p.error_code, p.leader_id) == (0, 0, leader), node.node_id
        ends = [v.log_end_offset for v in p.current_voters]
        assert sorted(v.replica_id for v in p.current_voters) == [1, 2, 3]
        assert p.high_watermark > 0 and all(e > 0 for e in ends), (node.node_id, ends)
