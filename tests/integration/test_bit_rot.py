"""Bit rot on a real 3-node cluster: a damaged replica is never served and is repaired.

The damage is what a disk does: 8 bytes flipped in the middle of a sealed segment, behind the
node's back. A leader finds it when it first serves the range (and gives its leadership to
a healthy in-sync replica); a follower's is found by a scrub started with ``rillet scrub``.
Either way consumers read every acknowledged record without an error, and the damaged
replica ends byte-identical to the others again.
"""

from __future__ import annotations

import json
import random
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_checks import FAST_ELECTIONS, agreed_state, read_all, wait_for

from rillet.client import (
    BlockingAdmin,
    BlockingConsumer,
    BlockingProducer,
    NewTopic,
    TopicPartition,
)
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = pytest.mark.integration

CONFIG = FAST_ELECTIONS + (
    "broker_session_timeout_ms = 2000\nbroker_heartbeat_interval_ms = 300\n"
    "leader_rebalance_interval_ms = 1000\n"
    "\n[replication]\nreplica_lag_time_max_ms = 3000\n"
)
TOPIC_CONFIG = {"segment.bytes": "8192"}  # many sealed segments


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(plan_cluster(tmp_path, 3, CONFIG)) as c:
        c.start()
        yield c


def data_dir(cluster: LocalCluster, node_id: int) -> Path:
    return Path(cluster.plan.node(node_id).work_dir) / "data"


def segments(cluster: LocalCluster, node_id: int, topic: str) -> list[Path]:
    return sorted((data_dir(cluster, node_id) / f"{topic}-0").glob("*.log"))


def log_bytes(cluster: LocalCluster, node_id: int, topic: str) -> bytes:
    return b"".join(p.read_bytes() for p in segments(cluster, node_id, topic))


def identical(cluster: LocalCluster, topic: str) -> bool:
    return len({log_bytes(cluster, n, topic) for n in (1, 2, 3)}) == 1


def leader_and_isr(bootstrap: str, topic: str) -> tuple[int, list[int]]:
    with BlockingAdmin(bootstrap) as admin:
        p = admin.describe_topics([topic])[0].partitions[0]
    return p.leader, sorted(p.isr)


BATCH_HEADER_BYTES = 61  # Kafka's v2 batch header; the records follow it


def flip_middle_of_a_sealed_segment(path: Path) -> int:
    """Flip 8 bytes in the records of the batch in the middle of the segment: the CRC
    covers them. (The header's first 21 bytes, base offset and length among them, are not
    covered by the CRC; a position picked by size alone sometimes hit them.)"""
    data = path.read_bytes()
    position = 0
    while True:
        (length,) = struct.unpack_from(">i", data, position + 8)
        end = position + 12 + length
        if end >= len(data) // 2:
            break
        position = end
    middle = position + BATCH_HEADER_BYTES + (end - position - BATCH_HEADER_BYTES) // 2 - 4
    with path.open("r+b") as f:
        f.seek(middle)
        data = f.read(8)
        f.seek(middle)
        f.write(bytes(b ^ 0xFF for b in data))
    return middle


def make_topic(cluster: LocalCluster, topic: str) -> dict[bytes, tuple[int, int]]:
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 1, replication_factor=3, configs=TOPIC_CONFIG)])
    wait_for("agreement", lambda: agreed_state(cluster, [1, 2, 3]))
    rng = random.Random(7)  # incompressible values: the segments fill as planned
    values = [b"r%05d" % i + rng.randbytes(80) for i in range(3000)]
    acked = {}
    with BlockingProducer(cluster.bootstrap, acks=-1, batch_bytes=2048) as producer:
        futures = [(v, producer.send(topic, v, key=v)) for v in values]
        for v, f in futures:
            md = f.result(timeout=30)
            acked[v] = (md.partition, md.offset)
    wait_for("identical replicas", lambda: identical(cluster, topic), 30)
    assert len(segments(cluster, 1, topic)) >= 8
    return acked


def read_every_acknowledged_record(
    cluster: LocalCluster, topic: str, acked: dict[bytes, tuple[int, int]]
) -> None:
    records = read_all(cluster.bootstrap, topic, 1, len(acked))  # raises on a client error
    assert {r.value: (r.partition, r.offset) for r in records} == acked


def test_a_leader_with_a_damaged_sealed_segment_hands_over_and_is_repaired(
    cluster: LocalCluster,
) -> None:
    topic = "rot-leader"
    acked = make_topic(cluster, topic)
    leader, _ = leader_and_isr(cluster.bootstrap, topic)
    cluster.stop(leader)  # clean: the restart trusts every segment, re-reading none
    damaged = segments(cluster, leader, topic)[2]
    flip_middle_of_a_sealed_segment(damaged)
    cluster.spawn(leader)
    cluster.wait_ready([leader])
    # The preferred-leader rebalance makes it the leader again once it is back in sync.
    wait_for(
        "the restarted node to lead again",
        lambda: leader_and_isr(cluster.bootstrap, topic) == (leader, [1, 2, 3]),
        30,
    )
    read_every_acknowledged_record(cluster, topic, acked)
    # It found the damage when serving it, gave up its leadership, cut its log before the
    # damaged batch and fetched the rest again: its copy is whole again.
    wait_for("identical replicas", lambda: identical(cluster, topic), 30)
    node_log = cluster.log_path(leader).read_text(errors="replace")
    assert "ERROR" in node_log and str(damaged) in node_log
    read_every_acknowledged_record(cluster, topic, acked)


def test_a_follower_damage_is_found_by_a_scrub_and_repaired(cluster: LocalCluster) -> None:
    topic = "rot-follower"
    acked = make_topic(cluster, topic)
    leader, _ = leader_and_isr(cluster.bootstrap, topic)
    follower = next(n for n in (1, 2, 3) if n != leader)
    damaged = segments(cluster, follower, topic)[1]
    flip_middle_of_a_sealed_segment(damaged)  # under the running node, through the page cache
    assert not identical(cluster, topic)
    scrub = subprocess.run(
        [
            sys.executable,
            "-m",
            "rillet.cli.main",
            "scrub",
            "--data-dir",
            str(data_dir(cluster, follower)),
            "--json",
            "--timeout-s",
            "60",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert scrub.returncode == 1, scrub.stderr
    found = json.loads(scrub.stdout)["damaged"]
    assert [d["file"] for d in found] == [str(damaged)]
    wait_for("identical replicas", lambda: identical(cluster, topic), 30)
    wait_for("a full ISR", lambda: leader_and_isr(cluster.bootstrap, topic)[1] == [1, 2, 3], 30)
    read_every_acknowledged_record(cluster, topic, acked)
    node_log = cluster.log_path(follower).read_text(errors="replace")
    assert "ERROR" in node_log and str(damaged) in node_log


def test_the_only_copy_is_kept_and_its_damaged_range_refused(tmp_path: Path) -> None:
    """No healthy copy exists (replication factor 1): the node must not cut committed data.
    Everything before the damaged batch is served, the batch is not, the data stays."""
    topic = "rot-alone"
    with LocalCluster(plan_cluster(tmp_path, 1, CONFIG)) as cluster:
        cluster.start()
        with BlockingAdmin(cluster.bootstrap) as admin:
            admin.create_topics([NewTopic(topic, 1, replication_factor=1, configs=TOPIC_CONFIG)])
        rng = random.Random(8)
        values = [b"a%05d" % i + rng.randbytes(80) for i in range(1500)]
        with BlockingProducer(cluster.bootstrap, acks=-1, batch_bytes=2048) as producer:
            for f in [producer.send(topic, v) for v in values]:
                f.result(timeout=30)
        cluster.stop(1)
        damaged = segments(cluster, 1, topic)[2]
        flip_middle_of_a_sealed_segment(damaged)
        sizes = {p: p.stat().st_size for p in segments(cluster, 1, topic)}
        cluster.spawn(1)
        cluster.wait_ready([1])
        first_of_damaged = int(damaged.stem)
        refused = "no other in-sync replica"
        records: list[Any] = []
        with BlockingConsumer(cluster.bootstrap) as consumer:  # poll raises on a client error
            consumer.assign([TopicPartition(topic, 0)])
            consumer.seek(TopicPartition(topic, 0), 0)
            deadline = time.monotonic() + 90  # generous: a loaded machine
            while time.monotonic() < deadline and not (
                len(records) >= first_of_damaged
                and refused in cluster.log_path(1).read_text(errors="replace")
            ):
                records += consumer.poll(timeout_ms=200)
            for _ in range(5):  # and nothing comes after the damage
                records += consumer.poll(timeout_ms=200)
        offsets = [r.offset for r in records]
        assert offsets == list(range(len(offsets)))  # a gap-free prefix, up to the damage
        assert first_of_damaged <= len(offsets) < len(values)
        node_log = cluster.log_path(1).read_text(errors="replace")
        assert refused in node_log and str(damaged) in node_log
        assert {p: p.stat().st_size for p in segments(cluster, 1, topic)} == sizes
