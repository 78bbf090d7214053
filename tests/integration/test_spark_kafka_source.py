"""Spark's own Kafka source (spark-sql-kafka-0-10) reads rillet through its Kafka listener.

The connector comes from Maven Central through ``spark.jars.packages`` (Ivy cache in
``~/.cache/rillet/ivy``); a JVM takes packages only when it starts, so the Spark side runs in
its own process (``tests/support/spark_kafka_reader.py``). The connector's version is
PySpark's own when Maven Central has it, else the newest release of the same major version
(``RILLET_SPARK_KAFKA_VERSION`` overrides). Skipped, with the reason, without PySpark, Java
or the connector.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="PySpark is not installed: pip install -e '.[spark]'")
if shutil.which("java") is None:
    pytest.skip("Java (17) is not on PATH: Spark needs it", allow_module_level=True)

from rillet.client import (
    BlockingAdmin,
    BlockingConsumer,
    BlockingProducer,
    NewTopic,
    TopicPartition,
)
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = pytest.mark.integration

CENTRAL = "https://repo1.maven.org/maven2/org/apache/spark/spark-sql-kafka-0-10_2.13"
IVY_DIR = Path.home() / ".cache" / "rillet" / "ivy"
READER = Path(__file__).parent.parent / "support" / "spark_kafka_reader.py"
READER_TIMEOUT_S = 420
NO_CONNECTOR_EXIT = 3


def _release(version: str) -> tuple[int, ...] | None:
    return (
        tuple(int(x) for x in version.split("."))
        if re.fullmatch(r"\d+\.\d+\.\d+", version)
        else None
    )


def connector_version() -> str:
    """The spark-sql-kafka-0-10 version to use, or a skip with the reason."""
    if os.environ.get("RILLET_SPARK_KAFKA_VERSION"):
        return os.environ["RILLET_SPARK_KAFKA_VERSION"]
    import pyspark

    wanted = pyspark.__version__
    try:
        with urllib.request.urlopen(f"{CENTRAL}/maven-metadata.xml", timeout=20) as answer:
            listed = re.findall(r"<version>([^<]+)</version>", answer.read().decode())
    except OSError:  # offline: whatever the Ivy cache already holds
        cached = IVY_DIR / "jars"
        listed = [
            m.group(1)
            for p in cached.glob("org.apache.spark_spark-sql-kafka-0-10_2.13-*.jar")
            if (m := re.search(r"_2\.13-(.+)\.jar$", p.name))
        ]
    if wanted in listed:
        return wanted
    major = wanted.split(".")[0]
    same_major = [v for v in listed if v.split(".")[0] == major and _release(v)]
    if not same_major:
        pytest.skip(f"no spark-sql-kafka-0-10_2.13 {major}.x on Maven Central or in {IVY_DIR}")
    return max(same_major, key=lambda v: _release(v) or ())


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    base = tmp_path_factory.mktemp("spark-kafka-cluster")
    with LocalCluster(plan_cluster(base, 3)) as c:
        c.start()
        yield c


def run_reader(
    cluster: LocalCluster,
    topic: str,
    version: str,
    tmp_path: Path,
    *extra: str,
    timeout_s: float = READER_TIMEOUT_S,
) -> dict[str, Any]:
    """Run tests/support/spark_kafka_reader.py on ``topic``; its JSON answer (or a skip
    when the connector is unavailable)."""
    IVY_DIR.mkdir(parents=True, exist_ok=True)
    log = tmp_path / "spark.log"
    with open(log, "wb") as err:
        run = subprocess.run(
            [
                sys.executable,
                str(READER),
                "--kafka-bootstrap",
                cluster.plan.kafka_bootstrap,
                "--rillet-bootstrap",
                cluster.bootstrap,
                "--topic",
                topic,
                "--connector-version",
                version,
                "--ivy-dir",
                str(IVY_DIR),
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=err,
            timeout=timeout_s,
            check=False,
        )
    text = log.read_text(errors="replace")
    # The reader's own traceback says why it failed; the JVM's shutdown hooks log after it.
    start = text.find("Traceback (most recent call last)")
    tail = text[start : start + 4000] if start >= 0 else text[-3000:]
    if run.returncode == NO_CONNECTOR_EXIT:
        why = [ln.strip() for ln in text.splitlines() if "unresolved dependency" in ln]
        pytest.skip(
            f"Spark's Kafka connector {version} is unavailable: "
            + (why[0] if why else text.strip().splitlines()[-1])
        )
    assert run.returncode == 0, tail
    answer: dict[str, Any] = json.loads(run.stdout)
    return answer


def test_spark_s_kafka_source_reads_what_format_rillet_reads(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    version = connector_version()
    topic = "spark-kafka-source"
    now_ms = int(time.time() * 1000) - 60_000
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 3, 3)])
    with BlockingProducer(cluster.bootstrap, acks="all") as producer:
        futures = [
            producer.send(
                topic,
                None if i == 5 else f"value-{i}".encode(),
                key=None if i % 7 == 0 else f"key-{i % 11}".encode(),
                headers=[("n", str(i).encode()), ("bin", b"\x00\xff"), ("none", None)]
                if i % 3
                else None,
                partition=i % 3,
                timestamp_ms=now_ms + i,
            )
            for i in range(60)
        ]
        for f in futures:
            f.result(timeout=30)
    rows = run_reader(cluster, topic, version, tmp_path)
    assert len(rows["rillet"]) == 60
    assert rows["kafka"] == rows["rillet"]
    assert rows["stream"] == rows["rillet"]
    by_offset = {(r[3], r[4]): r for r in rows["kafka"]}
    assert by_offset[(0, 0)][7] is None  # record 0: no headers
    assert by_offset[(1, 0)][7] == [["n", "31"], ["bin", "00ff"], ["none", None]]
    assert by_offset[(2, 1)][1] is None  # record 5: a null value


TXN_ROWS = 2000


@pytest.mark.skipif(
    not os.environ.get("RILLET_SPARK_TXN_TESTS"),
    reason="a Spark JVM of its own with task retries (about a minute): RILLET_SPARK_TXN_TESTS=1",
)
def test_a_transactional_write_retried_after_a_failure_leaves_no_duplicate(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    """format("rillet") writes transactionally; the task holding the last row fails once
    after writing and Spark retries it. read_committed readers (format("rillet"), Spark's
    Kafka source with kafka.isolation.level=read_committed, batch and streaming) see every
    row exactly once; the failed attempt's records are in the log, aborted."""
    version = connector_version()
    topic = "spark-txn-write"
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 3, 3)])
    rows = run_reader(
        cluster,
        topic,
        version,
        tmp_path,
        "--master",
        "local[2,2]",
        "--isolation",
        "read_committed",
        "--txn-write-rows",
        str(TXN_ROWS),
        timeout_s=2 * READER_TIMEOUT_S,  # a write with a retried task, then three reads
    )
    assert rows["failed_once"]
    values = sorted(bytes.fromhex(r[1]).decode() for r in rows["rillet"])
    assert values == sorted(f"row-{n}" for n in range(TXN_ROWS))
    assert rows["kafka"] == rows["rillet"]
    assert rows["stream"] == rows["rillet"]
    # The failed attempt wrote before it failed: its records are there, aborted.
    tps = [TopicPartition(topic, p) for p in range(3)]
    with BlockingConsumer(cluster.bootstrap) as consumer:
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        everything = 0
        deadline = time.monotonic() + 30
        for tp, end in consumer.end_offsets(tps).items():
            while consumer.position(tp) < end and time.monotonic() < deadline:
                everything += len(consumer.poll(timeout_ms=200))
    assert everything > TXN_ROWS
