"""format("rillet") and the backfill job on real Spark against real rillet clusters.

One quiet local[2] SparkSession serves the whole test run (starting one takes seconds).
Most tests share the session's 3-node cluster (the ``rillet_cluster`` fixture; each test has
its own topics); tests that stop or kill nodes start a cluster of their own. Skipped, with
the reason, when PySpark or Java is missing (``pip install -e '.[spark]'``, Java 17).
"""

from __future__ import annotations

import datetime
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="PySpark is not installed: pip install -e '.[spark]'")
pytest.importorskip("pyarrow", reason="pyarrow is not installed: pip install -e '.[spark]'")
if shutil.which("java") is None:
    pytest.skip("Java (17) is not on PATH: Spark needs it", allow_module_level=True)

from cluster_checks import FAST_ELECTIONS, agreed_state, wait_for

from rillet.client import (
    BlockingAdmin,
    BlockingConsumer,
    BlockingProducer,
    NewTopic,
    TopicPartition,
)
from rillet.launcher.local_cluster import LocalCluster, plan_cluster
from rillet.spark_io.backfill_job import backfill
from rillet.spark_io.backfill_manifest import load_manifests
from rillet.spark_io.options import parse_write_options

pytestmark = pytest.mark.integration

T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z
# Records here carry historical timestamps (from T0): topics accept any age (the default,
# as in Kafka; spelt out so that a node configured otherwise still runs these tests).
HISTORICAL = {"message.timestamp.before.max.ms": "9223372036854775807"}
HOUR_MS = 3_600_000


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from rillet.spark_io.session import local_session

    session = local_session("local[2]", app_name="rillet-tests")
    yield session
    session.stop()


@pytest.fixture
def bootstrap(rillet_cluster: LocalCluster) -> str:
    return rillet_cluster.bootstrap


# -- helpers ---------------------------------------------------------------------------------


def create(bootstrap: str, topic: str, partitions: int, rf: int = 3) -> None:
    with BlockingAdmin(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, partitions, rf, configs=HISTORICAL)])


def produce(
    bootstrap: str, topic: str, start: int, count: int, *, acks: int | str = "all", **kw: Any
) -> None:
    with BlockingProducer(bootstrap, acks=acks, **kw) as producer:
        futures = [
            producer.send(
                topic,
                f"value-{i}".encode(),
                key=None if i % 7 == 0 else f"key-{i % 50}".encode(),
                headers=[("n", str(i).encode()), ("src", b"\x00\xff")] if i % 3 else None,
                timestamp_ms=T0 + i * HOUR_MS // 10,
            )
            for i in range(start, start + count)
        ]
        for f in futures:
            f.result(timeout=30)


def ends(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    with BlockingConsumer(bootstrap) as consumer:
        return {tp.partition: o for tp, o in consumer.end_offsets(tps).items()}


def consume(bootstrap: str, topic: str, until: dict[int, int]) -> list[tuple[Any, ...]]:
    """Every record below ``until`` per partition, as comparable tuples."""
    want = sum(until.values())
    tps = [TopicPartition(topic, p) for p in until]
    got: list[tuple[Any, ...]] = []
    with BlockingConsumer(bootstrap) as consumer:
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        deadline = time.monotonic() + 30
        while len(got) < want and time.monotonic() < deadline:
            for r in consumer.poll(timeout_ms=200):
                if r.offset < until[r.partition]:
                    got.append(
                        (
                            r.partition,
                            r.offset,
                            r.key,
                            r.value,
                            r.timestamp_ms,
                            tuple(r.headers) or None,
                        )
                    )
    return sorted(got)


def millis(ts: datetime.datetime) -> int:
    """PySpark returns timestamps as naive local-time datetimes."""
    return round(ts.timestamp() * 1000)


def as_tuples(rows: list[Any], headers: bool = True) -> list[tuple[Any, ...]]:
    out = []
    for r in rows:
        hs = None
        if headers and r["headers"] is not None:
            hs = tuple((h["key"], bytes(h["value"])) for h in r["headers"])
        out.append(
            (
                r["partition"],
                r["offset"],
                None if r["key"] is None else bytes(r["key"]),
                None if r["value"] is None else bytes(r["value"]),
                millis(r["timestamp"]),
                hs,
            )
        )
    return sorted(out)


def read(spark: Any, bootstrap: str, **options: str) -> Any:
    reader = spark.read.format("rillet").option("bootstrap", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def leaders(bootstrap: str, topic: str) -> dict[int, int]:
    with BlockingAdmin(bootstrap) as admin:
        return {p.partition: p.leader for p in admin.describe_topics([topic])[0].partitions}


# -- batch reads -------------------------------------------------------------------------------


def test_a_batch_read_equals_what_a_consumer_reads_up_to_the_high_watermark(
    spark: Any, bootstrap: str
) -> None:
    create(bootstrap, "sp-equal", 3)
    produce(bootstrap, "sp-equal", 0, 3000)
    hw = ends(bootstrap, "sp-equal", 3)
    df = read(spark, bootstrap, subscribe="sp-equal", includeHeaders="true")
    assert [f.name for f in df.schema.fields] == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
        "headers",
    ]
    rows = df.collect()
    assert {r["topic"] for r in rows} == {"sp-equal"}
    assert {r["timestampType"] for r in rows} == {0}
    assert as_tuples(rows) == consume(bootstrap, "sp-equal", hw)
    # Without includeHeaders the column is not there (Spark's Kafka source does the same).
    assert "headers" not in read(spark, bootstrap, subscribe="sp-equal").columns


def test_records_produced_after_planning_are_not_read(spark: Any, bootstrap: str) -> None:
    create(bootstrap, "sp-moving", 2)
    produce(bootstrap, "sp-moving", 0, 500)
    stop = threading.Event()
    produced = [500]

    def keep_producing() -> None:
        with BlockingProducer(bootstrap, acks="all", linger_ms=1) as producer:
            while not stop.is_set():
                futures = [
                    producer.send("sp-moving", f"later-{produced[0] + i}".encode())
                    for i in range(50)
                ]
                for f in futures:
                    f.result(timeout=30)
                produced[0] += 50

    writer = threading.Thread(target=keep_producing)
    writer.start()
    try:
        wait_for("concurrent writes", lambda: produced[0] >= 1000, 30)
        before = ends(bootstrap, "sp-moving", 2)
        df = read(spark, bootstrap, subscribe="sp-moving")
        first = df.collect()
        after = ends(bootstrap, "sp-moving", 2)
        wait_for("more writes", lambda: produced[0] >= sum(after.values()) + 200, 30)
        again = df.collect()  # the same DataFrame: the same planned range
    finally:
        stop.set()
        writer.join()
    planned: dict[int, int] = {}
    for p in (0, 1):
        offsets = sorted(r["offset"] for r in first if r["partition"] == p)
        assert offsets == list(range(len(offsets)))  # from the start, no gaps
        planned[p] = len(offsets)
        # The planned end is the high watermark at planning: between the two probes.
        assert before[p] <= planned[p] <= after[p]
    assert sorted((r["partition"], r["offset"]) for r in again) == sorted(
        (r["partition"], r["offset"]) for r in first
    )
    assert as_tuples(first, headers=False) == [
        (*t[:5], None) for t in consume(bootstrap, "sp-moving", planned)
    ]
    # A new DataFrame plans again and sees the records written since.
    assert read(spark, bootstrap, subscribe="sp-moving").count() > len(first)


def test_assign_and_explicit_offset_ranges(spark: Any, bootstrap: str) -> None:
    create(bootstrap, "sp-range", 2)
    produce(bootstrap, "sp-range", 0, 400)
    df = read(
        spark,
        bootstrap,
        assign='{"sp-range": [1]}',
        startingOffsets='{"sp-range": {"1": 10}}',
        endingOffsets='{"sp-range": {"1": 25}}',
    )
    assert [(r["partition"], r["offset"]) for r in df.orderBy("offset").collect()] == [
        (1, o) for o in range(10, 25)
    ]
    # By time: records are 6 minutes apart, so 1 hour after T0 starts 10 records in.
    df = read(spark, bootstrap, subscribe="sp-range", startingTimestamp=str(T0 + HOUR_MS))
    assert df.count() == 400 - 10
    # endingOffsets is exclusive and -1 is the high watermark; defaults fill the rest.
    hw = ends(bootstrap, "sp-range", 2)
    df = read(spark, bootstrap, subscribe="sp-range", endingOffsets='{"sp-range": {"0": 5}}')
    assert df.count() == 5 + hw[1]


def test_options_are_checked_with_clear_messages(spark: Any, bootstrap: str) -> None:
    create(bootstrap, "sp-opts", 1)
    produce(bootstrap, "sp-opts", 0, 10)
    cases = {
        "startingOffsets='latest' is not allowed for batch": {
            "subscribe": "sp-opts",
            "startingOffsets": "latest",
        },
        "only offsets below 10 are committed": {
            "subscribe": "sp-opts",
            "endingOffsets": '{"sp-opts": {"0": 11}}',
        },
        "topic 'sp-nope' does not exist": {"subscribe": "sp-nope"},
        "'sp-opts' has 1 partition": {"assign": '{"sp-opts": [3]}'},
    }
    for message, options in cases.items():
        with pytest.raises(Exception, match=message) as raised:
            read(spark, bootstrap, **options).collect()
        # One clear line first: the rillet error, not a traceback (local_session hides
        # Python tracebacks inside Spark's error messages).
        first = str(raised.value).splitlines()[0]
        assert message in first and "rillet.spark_io.errors" in first, first
    # Spark's Kafka source's name for the servers works too.
    aliased = (
        spark.read.format("rillet")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", "sp-opts")
        .load()
    )
    assert aliased.count() == 10
    with pytest.raises(Exception, match="exactly one of 'subscribe'"):
        read(spark, bootstrap)  # at load(): no subscription at all


def test_large_partitions_are_split_into_spark_partitions(spark: Any, bootstrap: str) -> None:
    create(bootstrap, "sp-split", 2)
    produce(bootstrap, "sp-split", 0, 1000)
    hw = ends(bootstrap, "sp-split", 2)
    df = read(spark, bootstrap, subscribe="sp-split", maxRecordsPerPartition="100")
    expected_tasks = sum(-(-n // 100) for n in hw.values())
    assert df.rdd.getNumPartitions() == expected_tasks
    offsets = sorted(
        (r["partition"], r["offset"]) for r in df.select("partition", "offset").collect()
    )
    assert offsets == sorted((p, o) for p, n in hw.items() for o in range(n))
    df = read(spark, bootstrap, subscribe="sp-split", minPartitions="7")
    assert df.rdd.getNumPartitions() >= 7
    assert df.count() == 1000


# -- high watermark and leader changes (own clusters: nodes are stopped and killed) ----------

OWN_CONFIG = FAST_ELECTIONS + (
    "broker_session_timeout_ms = 2000\nbroker_heartbeat_interval_ms = 300\n"
    "\n[replication]\nreplica_lag_time_max_ms = 60000\n"
    "\n[tasks]\nretention_check_interval_ms = 100\n"
)


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(plan_cluster(tmp_path / "cluster", 3, OWN_CONFIG)) as cluster:
        cluster.start()
        wait_for("agreement", lambda: agreed_state(cluster, [1, 2, 3]))
        yield cluster


def test_records_above_the_high_watermark_are_never_read(
    spark: Any, own_cluster: LocalCluster
) -> None:
    cluster = own_cluster
    create(cluster.bootstrap, "sp-hw", 1)
    produce(cluster.bootstrap, "sp-hw", 0, 100)
    leader = leaders(cluster.bootstrap, "sp-hw")[0]
    followers = [n for n in (1, 2, 3) if n != leader]
    only_leader = cluster.plan.node(leader).bootstrap
    for f in followers:  # the followers stop fetching: nothing new can be committed
        cluster.signal(f, signal.SIGSTOP)
    try:
        produce(only_leader, "sp-hw", 100, 20, acks=1)  # on the leader only
        rows = read(spark, only_leader, subscribe="sp-hw").collect()
        assert sorted(r["offset"] for r in rows) == list(range(100))
        with pytest.raises(Exception, match="only offsets below 100 are committed"):
            read(
                spark, only_leader, subscribe="sp-hw", endingOffsets='{"sp-hw": {"0": 110}}'
            ).collect()
    finally:
        for f in followers:
            cluster.signal(f, signal.SIGCONT)
    wait_for("the high watermark to pass them", lambda: ends(only_leader, "sp-hw", 1)[0] == 120)
    assert read(spark, cluster.bootstrap, subscribe="sp-hw").count() == 120


def test_a_read_continues_on_the_new_leader_after_a_leader_is_killed(
    spark: Any, own_cluster: LocalCluster
) -> None:
    cluster = own_cluster
    create(cluster.bootstrap, "sp-failover", 2)
    produce(cluster.bootstrap, "sp-failover", 0, 2000)
    df = read(spark, cluster.bootstrap, subscribe="sp-failover", includeHeaders="true")
    first = as_tuples(df.collect())  # plans the range
    victim = leaders(cluster.bootstrap, "sp-failover")[0]
    cluster.kill(victim)
    survivors = ",".join(cluster.plan.node(n).bootstrap for n in (1, 2, 3) if n != victim)
    # The same DataFrame reads the same planned range again, now from the new leaders (its
    # tasks find them by refreshing metadata and retrying).
    again = as_tuples(df.collect())
    assert again == first
    assert len(first) == 2000
    assert leaders(survivors, "sp-failover")[0] != victim


def test_records_deleted_by_retention_fail_the_read_or_are_skipped(
    spark: Any, own_cluster: LocalCluster
) -> None:
    bootstrap = own_cluster.bootstrap
    with BlockingAdmin(bootstrap) as admin:
        configs = {"segment.bytes": "2048", "retention.bytes": "4096", **HISTORICAL}
        admin.create_topics([NewTopic("sp-loss", 1, 3, configs=configs)])

    def log_start() -> int:
        with BlockingConsumer(bootstrap) as consumer:
            return consumer.beginning_offsets([TopicPartition("sp-loss", 0)])[
                TopicPartition("sp-loss", 0)
            ]

    produce(bootstrap, "sp-loss", 0, 300, batch_bytes=512)
    start = wait_for("retention to delete old segments", lambda: log_start() or None, 20)
    everything = '{"sp-loss": {"0": 0}}'
    with pytest.raises(Exception, match=r"offsets 0\.\.\d+ were requested but are gone"):
        read(spark, bootstrap, subscribe="sp-loss", startingOffsets=everything).collect()
    lenient = read(
        spark, bootstrap, subscribe="sp-loss", startingOffsets=everything, failOnDataLoss="false"
    )
    assert min(r["offset"] for r in lenient.collect()) >= start
    # Planned, then deleted before the tasks read them: the tasks notice.
    df = read(spark, bootstrap, subscribe="sp-loss")
    planned = df.collect()
    produce(bootstrap, "sp-loss", 300, 300, batch_bytes=512)
    wait_for("more deletions", lambda: log_start() > planned[-1]["offset"] - 5 or None, 20)
    with pytest.raises(Exception, match=r"DataLossError: .* of the planned range .* were deleted"):
        df.collect()
    skipping = read(spark, bootstrap, subscribe="sp-loss", failOnDataLoss="false")
    assert skipping.count() > 0


# -- writing -----------------------------------------------------------------------------------


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


def test_write_then_read_round_trips_bytes_keys_and_headers(spark: Any, bootstrap: str) -> None:
    create(bootstrap, "sp-out", 3)
    create(bootstrap, "sp-out2", 1)
    rows = [
        (
            None if i % 5 == 0 else f"k{i}".encode(),
            bytes([i % 256, 0, 255]) + f"v{i}".encode(),
            None if i % 4 == 0 else [("a", b"\x00\x01"), ("b", None if i % 3 else f"{i}".encode())],
            i % 3,
            datetime.datetime.fromtimestamp((T0 + i) / 1000, datetime.UTC),
        )
        for i in range(600)
    ]
    df = spark.createDataFrame(
        rows,
        "key binary, value binary, headers array<struct<key:string,value:binary>>, "
        "partition int, timestamp timestamp",
    )
    df.write.format("rillet").option("bootstrap", bootstrap).option("topic", "sp-out").mode(
        "append"
    ).save()
    back = read(spark, bootstrap, subscribe="sp-out", includeHeaders="true").collect()
    got = {
        bytes(r["value"]): (
            None if r["key"] is None else bytes(r["key"]),
            None
            if r["headers"] is None
            else [(h["key"], _bytes(h["value"])) for h in r["headers"]],
            r["partition"],
            millis(r["timestamp"]),
        )
        for r in back
    }
    want = {v: (k, hs, p, T0 + i) for i, (k, v, hs, p, _) in enumerate(rows)}
    assert len(back) == len(rows)
    assert got == want
    # A topic column, string values, and a DataFrame read from rillet written back as is.
    spark.createDataFrame(
        [("sp-out2", "héllo", "k")], "topic string, value string, key string"
    ).write.format("rillet").option("bootstrap", bootstrap).mode("append").save()
    copied = read(spark, bootstrap, subscribe="sp-out2").collect()
    assert [(bytes(r["key"]), bytes(r["value"])) for r in copied] == [(b"k", "héllo".encode())]
    with pytest.raises(Exception, match="column 'vaule' cannot be written"):
        spark.createDataFrame([(b"x",)], "vaule binary").write.format("rillet").option(
            "bootstrap", bootstrap
        ).option("topic", "sp-out").mode("append").save()


def committed_values(bootstrap: str, topic: str, partitions: int) -> list[bytes]:
    """Every value a read_committed consumer reads once no transaction is open on the topic.

    A committed transaction's markers are written after EndTxn is answered (as in Kafka), so
    the last stable offset can trail the log end for a moment after the writer returns: wait
    until the two meet before reading."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    out: list[bytes] = []
    with (
        BlockingConsumer(bootstrap, isolation_level="read_committed") as consumer,
        BlockingConsumer(bootstrap) as uncommitted,
    ):
        wait_for(
            f"the last stable offsets of {topic} to reach its log end",
            lambda: consumer.end_offsets(tps) == uncommitted.end_offsets(tps),
            timeout_s=30,
        )
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        deadline = time.monotonic() + 30
        for tp, end in consumer.end_offsets(tps).items():
            while consumer.position(tp) < end and time.monotonic() < deadline:
                out += [r.value for r in consumer.poll(timeout_ms=200) if r.value is not None]
    return sorted(out)


def test_reads_take_committed_transactions_only_and_writes_can_be_transactional(
    spark: Any, bootstrap: str
) -> None:
    """A read stops at the last stable offset and skips aborted transactions; a
    transactional write's records are all visible to read_committed readers once it ends."""
    create(bootstrap, "sp-txn", 2)
    # The open transaction must outlast the Spark read however slow (not aborted by timeout).
    with BlockingProducer(
        bootstrap, transactional_id="sp-txn-app", transaction_timeout_ms=900_000
    ) as producer:
        for n, commit in enumerate([True, False]):
            producer.begin_transaction()
            for i in range(4):
                producer.send("sp-txn", f"t{n}-{i}".encode(), partition=i % 2)
            producer.commit_transaction() if commit else producer.abort_transaction()
        producer.begin_transaction()  # left open while Spark reads: past the LSO
        producer.send("sp-txn", b"open", partition=0).result(timeout=30)
        values = sorted(
            bytes(r["value"]) for r in read(spark, bootstrap, subscribe="sp-txn").collect()
        )
        assert values == [f"t0-{i}".encode() for i in range(4)]
        producer.abort_transaction()
    create(bootstrap, "sp-txn-out", 3)
    rows = [(f"w{i}",) for i in range(30)]
    spark.createDataFrame(rows, "value string").write.format("rillet").option(
        "bootstrap", bootstrap
    ).option("topic", "sp-txn-out").option("transactional", "true").mode("append").save()
    assert committed_values(bootstrap, "sp-txn-out", 3) == sorted(v.encode() for (v,) in rows)
    with pytest.raises(Exception, match="'transactional' is for batch writes"):
        parse_write_options({"bootstrap": bootstrap, "transactional": "true"}, streaming=True)


# -- streaming ---------------------------------------------------------------------------------


def test_streaming_available_now_reads_everything_committed_in_limited_batches(
    spark: Any, bootstrap: str, tmp_path: Path
) -> None:
    create(bootstrap, "sp-stream", 2)
    produce(bootstrap, "sp-stream", 0, 1000)
    query = (
        spark.readStream.format("rillet")
        .option("bootstrap", bootstrap)
        .option("subscribe", "sp-stream")
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "300")
        .load()
        .writeStream.format("memory")
        .queryName("sp_stream")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)
    assert query.exception() is None
    sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert sum(sizes) == 1000 and max(sizes) <= 300 and len(sizes) >= 4
    rows = spark.sql("SELECT partition, offset FROM sp_stream").collect()
    assert sorted((r["partition"], r["offset"]) for r in rows) == sorted(
        (p, o) for p, n in ends(bootstrap, "sp-stream", 2).items() for o in range(n)
    )

    # A stream restarted from its checkpoint reads only what is new (a file sink, which,
    # unlike the memory sink, can recover).
    def run_to_files() -> None:
        q = (
            spark.readStream.format("rillet")
            .option("bootstrap", bootstrap)
            .option("subscribe", "sp-stream")
            .option("startingOffsets", "earliest")
            .load()
            .select("partition", "offset")
            .writeStream.format("parquet")
            .option("path", str(tmp_path / "files"))
            .option("checkpointLocation", str(tmp_path / "files-checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        assert q.awaitTermination(120) and q.exception() is None

    run_to_files()
    produce(bootstrap, "sp-stream", 1000, 50)
    run_to_files()
    stored = spark.read.parquet(str(tmp_path / "files")).collect()
    assert sorted((r["partition"], r["offset"]) for r in stored) == sorted(
        (p, o) for p, n in ends(bootstrap, "sp-stream", 2).items() for o in range(n)
    )


def test_a_streaming_query_writes_to_a_topic_at_least_once(
    spark: Any, bootstrap: str, tmp_path: Path
) -> None:
    """writeStream.format("rillet"): a stream from one topic into another; each micro-batch
    is committed after its records are acknowledged, so the target holds every record."""
    create(bootstrap, "sp-sink-in", 2)
    create(bootstrap, "sp-sink-out", 1)
    produce(bootstrap, "sp-sink-in", 0, 500)
    query = (
        spark.readStream.format("rillet")
        .option("bootstrap", bootstrap)
        .option("subscribe", "sp-sink-in")
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "200")
        .load()
        .select("key", "value")
        .writeStream.format("rillet")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", "sp-sink-out")
        .option("checkpointLocation", str(tmp_path / "sink-checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(180)
    assert query.exception() is None
    assert sum(p["numInputRows"] for p in query.recentProgress) == 500
    source = sorted(
        bytes(r["value"]) for r in read(spark, bootstrap, subscribe="sp-sink-in").collect()
    )
    copied = sorted(
        bytes(r["value"]) for r in read(spark, bootstrap, subscribe="sp-sink-out").collect()
    )
    assert copied == source  # no micro-batch ran twice here, so exactly one copy each


# -- the backfill job --------------------------------------------------------------------------


def parquet_records(spark: Any, output: Path) -> list[tuple[int, int, bytes]]:
    rows = spark.read.parquet(str(output)).select("partition", "offset", "value").collect()
    return sorted((r["partition"], r["offset"], bytes(r["value"])) for r in rows)


def expected_records(bootstrap: str, topic: str, partitions: int) -> list[tuple[int, int, bytes]]:
    hw = ends(bootstrap, topic, partitions)
    return sorted((t[0], t[1], t[3]) for t in consume(bootstrap, topic, hw))


def group_offsets(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    with BlockingAdmin(bootstrap) as admin:
        found = admin.group_offsets(group)
    return {tp.partition: o for tp, o in found.items() if tp.topic == topic}


def test_two_successive_backfills_hold_every_record_exactly_once(
    spark: Any, bootstrap: str, tmp_path: Path
) -> None:
    create(bootstrap, "sp-bf", 2)
    out = tmp_path / "out"
    produce(bootstrap, "sp-bf", 0, 600)
    first = backfill(spark, bootstrap=bootstrap, topic="sp-bf", group="bf-g", output=out)
    assert first.rows == 600 and group_offsets(bootstrap, "bf-g", "sp-bf") == first.end
    produce(bootstrap, "sp-bf", 600, 250)
    second = backfill(spark, bootstrap=bootstrap, topic="sp-bf", group="bf-g", output=out)
    assert second.start == first.end and second.rows == 250
    assert group_offsets(bootstrap, "bf-g", "sp-bf") == second.end == ends(bootstrap, "sp-bf", 2)
    assert parquet_records(spark, out) == expected_records(bootstrap, "sp-bf", 2)
    # Partitioned by the records' event dates (one every 6 minutes from T0).
    dates = {r["event_date"] for r in spark.read.parquet(str(out)).select("event_date").collect()}
    assert dates == {
        datetime.date(2023, 11, 14),
        datetime.date(2023, 11, 15),
        datetime.date(2023, 11, 16),
        datetime.date(2023, 11, 17),
        datetime.date(2023, 11, 18),
    }
    third = backfill(spark, bootstrap=bootstrap, topic="sp-bf", group="bf-g", output=out)
    assert third.range_dir is None and third.rows == 0  # nothing new


@pytest.mark.parametrize("crash_at", ["written", "published"])
def test_a_backfill_stopped_part_way_and_run_again_leaves_no_duplicates_or_gaps(
    spark: Any, bootstrap: str, tmp_path: Path, crash_at: str
) -> None:
    topic = f"sp-bf-{crash_at}"
    create(bootstrap, topic, 2)
    out = tmp_path / "out"
    produce(bootstrap, topic, 0, 300)
    backfill(spark, bootstrap=bootstrap, topic=topic, group="g", output=out, offsets_store="file")
    produce(bootstrap, topic, 300, 200)

    class Crash(Exception):
        pass

    def hook(point: str) -> None:
        if point == crash_at:
            raise Crash(point)

    with pytest.raises(Crash):
        backfill(
            spark,
            bootstrap=bootstrap,
            topic=topic,
            group="g",
            output=out,
            offsets_store="file",
            hook=hook,
        )
    produce(bootstrap, topic, 500, 100)
    again = backfill(
        spark, bootstrap=bootstrap, topic=topic, group="g", output=out, offsets_store="file"
    )
    assert again.rows == 300  # everything since the first run, once
    assert bool(again.replaced) == (crash_at == "published")
    assert parquet_records(spark, out) == expected_records(bootstrap, topic, 2)
    assert [m.end for m in load_manifests(out)][-1] == ends(bootstrap, topic, 2)


def test_a_backfill_killed_mid_write_and_run_again_leaves_no_duplicates_or_gaps(
    spark: Any, bootstrap: str, tmp_path: Path
) -> None:
    """The real thing: ``rillet spark backfill`` (its own Spark driver and JVM) is SIGKILLed
    while Spark writes the Parquet files, then the job runs again."""
    topic = "sp-bf-kill"
    create(bootstrap, topic, 2)
    out = tmp_path / "out"
    produce(bootstrap, topic, 0, 4000)
    command = [
        sys.executable, "-m", "rillet.spark_io.backfill_cli", "backfill",
        "--bootstrap", bootstrap, "--topic", topic, "--group", "kill-g",
        "--output", str(out), "--master", "local[1]", "--max-records-per-partition", "200",
    ]  # fmt: skip
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    proc = subprocess.Popen(
        command, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        # Spark's file committer creates _temporary when the write job starts.
        wait_for(
            "the Parquet write to start",
            lambda: any((out / "_staging").glob("*/_temporary")) or proc.poll() is not None,
            120,
        )
        assert proc.poll() is None, "the backfill ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert load_manifests(out) == []  # killed before its range was published
    assert group_offsets(bootstrap, "kill-g", topic) == {}
    assert any((out / "_staging").iterdir())  # what the killed run left behind
    result = backfill(spark, bootstrap=bootstrap, topic=topic, group="kill-g", output=out)
    assert result.rows == 4000
    assert not any((out / "_staging").iterdir())
    assert parquet_records(spark, out) == expected_records(bootstrap, topic, 2)
    assert group_offsets(bootstrap, "kill-g", topic) == result.end == ends(bootstrap, topic, 2)


def test_reads_writes_and_backfills_over_tls_and_sasl(spark: Any, tmp_path: Path) -> None:
    """A cluster with TLS, SASL on the native listener and ACLs: Spark reads and writes as
    user etl (ssl.* and sasl.* options) and the backfill job runs with the same login."""
    from dataclasses import replace

    from rillet.cli.secure_cluster import make_tls_files
    from rillet.client.sasl import SaslLogin
    from rillet.client.security import ClientSecurity
    from rillet.wire.acls import AclBinding, Operation, PatternType, Permission, ResourceType

    tls = replace(make_tls_files(tmp_path), client_auth="requested")
    plan = plan_cluster(
        tmp_path / "cluster",
        3,
        tls=tls,
        native_sasl="SCRAM-SHA-256",
        super_users="User:CN=admin",
    )
    admin_options = ClientSecurity(tls.cafile, tls.client_certfile, tls.client_keyfile)
    etl = ClientSecurity(tls.cafile, sasl=SaslLogin("SCRAM-SHA-256", "etl", "etl-secret"))
    with LocalCluster(plan) as c:
        c.start()
        with BlockingAdmin(c.bootstrap, **admin_options.client_options()) as admin:
            admin.set_user_password("etl", "etl-secret")
            admin.create_topics([NewTopic("secure-in", 2, 3, configs=HISTORICAL)])
            admin.create_acls(
                [
                    AclBinding(rt, name, PatternType.LITERAL, "User:etl", "*", op, Permission.ALLOW)
                    for rt, name, op in (
                        (ResourceType.TOPIC, "secure-in", Operation.ALL),
                        (ResourceType.GROUP, "secure-backfill", Operation.READ),
                    )
                ]
            )
        login = {
            "ssl.cafile": tls.cafile,
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": "etl",
            "sasl.password": "etl-secret",
        }
        rows = [(f"k{i}".encode(), f"v{i}".encode(), i % 2) for i in range(100)]
        df = spark.createDataFrame(rows, "key binary, value binary, partition int")
        writer = df.write.format("rillet").option("bootstrap", c.bootstrap)
        for key, value in {**login, "topic": "secure-in"}.items():
            writer = writer.option(key, value)
        writer.mode("append").save()
        back = read(spark, c.bootstrap, subscribe="secure-in", **login).collect()
        assert sorted(bytes(r["value"]) for r in back) == sorted(v for _, v, _ in rows)
        with pytest.raises(Exception, match="AuthenticationFailed"):
            read(
                spark, c.bootstrap, subscribe="secure-in", **{**login, "sasl.password": "no"}
            ).collect()
        result = backfill(
            spark,
            bootstrap=c.bootstrap,
            topic="secure-in",
            group="secure-backfill",
            output=str(tmp_path / "out"),
            security=etl,
        )
        assert sum(result.end.values()) == 100
