"""The ``rillet`` command and the blocking client facade against a real node."""

from __future__ import annotations

import subprocess
import sys

import pytest
from node_process import NodeProcess

from rillet.client import (
    BlockingAdmin,
    BlockingConsumer,
    BlockingProducer,
    NewTopic,
    TopicPartition,
)
from rillet.client.errors import RilletError

pytestmark = pytest.mark.integration


def rillet(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rillet.cli.main", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_cli_topics_produce_consume(node: NodeProcess) -> None:
    bs = ["--bootstrap", node.bootstrap]
    created = rillet(
        "topics", "create", "cli", "--partitions", "2", "--config", "retention.ms=3600000", *bs
    )
    assert created.returncode == 0, created.stderr
    again = rillet("topics", "create", "cli", *bs)
    assert again.returncode == 1 and "TopicAlreadyExistsError" in again.stderr
    assert "Traceback" not in again.stderr
    assert "cli" in rillet("topics", "list", *bs).stdout.split()
    lines = "".join(f"k{i % 3}:value-{i}\n" for i in range(30))
    produced = rillet("produce", "cli", "--key-separator", ":", *bs, stdin=lines)
    assert produced.returncode == 0, produced.stderr
    consumed = rillet(
        "consume",
        "cli",
        "--from-beginning",
        "--max-messages",
        "30",
        "--print-key",
        "--key-separator",
        ":",
        *bs,
    )
    assert consumed.returncode == 0, consumed.stderr
    got = sorted(consumed.stdout.splitlines(), key=lambda s: int(s.split("-")[1]))
    assert got == [f"k{i % 3}:value-{i}" for i in range(30)]
    described = rillet("topics", "describe", "cli", *bs)
    assert "retention.ms=3600000" in described.stdout
    assert rillet("topics", "delete", "cli", *bs).returncode == 0
    assert "cli" not in rillet("topics", "list", *bs).stdout.split()


def test_blocking_facade_round_trip(node: NodeProcess) -> None:
    with BlockingAdmin(node.bootstrap) as admin:
        admin.create_topics([NewTopic("blocking", 1)])
        assert "blocking" in admin.list_topics()
    with BlockingProducer(node.bootstrap, acks="all") as producer:
        futures = [producer.send("blocking", f"b{i}".encode(), key=b"k") for i in range(100)]
        producer.flush()
        offsets = [f.result(timeout=10).offset for f in futures]
    assert offsets == list(range(100))
    tp = TopicPartition("blocking", 0)
    with BlockingConsumer(node.bootstrap, fetch_max_wait_ms=50) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 10)
        got: list[bytes | None] = []
        for _ in range(100):
            got.extend(r.value for r in consumer.poll(timeout_ms=200))
            if len(got) >= 90:
                break
        assert got == [f"b{i}".encode() for i in range(10, 100)]
        assert consumer.end_offsets([tp]) == {tp: 100}
        assert consumer.position(tp) == 100
    with BlockingProducer(node.bootstrap) as producer, pytest.raises(RilletError):
        producer.send("blocking", b"x", partition=5)
