"""Throttled moves, adding a broker and rebalancing, and decommissioning a broker to its
unregistration, under acks=all traffic with an exactly-once check.

The same cluster as test_reassignment.py (three voters, a broker-only node 4 started
later). docs/reassignment.md ("Add a broker and rebalance", "Decommission a broker")
describes these same steps. Opt-in like test_reassignment.py (RILLET_REASSIGNMENT_TESTS=1).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import trio
from acked_traffic import AckedTraffic
from cluster_checks import wait_for
from test_reassignment import (
    TOPIC,
    assert_exactly_once,
    cluster,
    live_brokers,
    partition_state,
    plan_file,
    read_partition,
    rillet,
    wait_for_move,
)

from rillet.client import Admin, BlockingAdmin, BlockingProducer, NewTopic
from rillet.client.errors import BrokerError
from rillet.launcher.local_cluster import LocalCluster

__all__ = ["cluster"]  # the fixture, shared

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("RILLET_REASSIGNMENT_TESTS") != "1",
        reason="about 60 s: run with RILLET_REASSIGNMENT_TESTS=1",
    ),
]

RATE = 500_000  # bytes/s


def fill(cluster: LocalCluster, partitions: list[int], records: int) -> None:
    with BlockingProducer(cluster.bootstrap, acks="all") as producer:
        for i in range(records):
            producer.send(
                TOPIC, b"x" * 1000 + str(i).encode(), partition=partitions[i % len(partitions)]
            )
        producer.flush()


def replica_bytes(cluster: LocalCluster, node: int, partition: int) -> int:
    d = Path(cluster.plan.node(node).work_dir) / "data" / f"{TOPIC}-{partition}"
    if not d.exists():
        return 0
    return sum(f.stat().st_size for f in d.iterdir() if f.suffix == ".log")


def copy_rate(cluster: LocalCluster, node: int, target: int) -> float:
    """Bytes/s at which ``node``'s new replica grew, from when it held a quarter of
    ``target`` (past the burst the buckets start with; the command that started the move
    may take seconds to end on a loaded machine) to 85% of it."""
    samples: list[tuple[float, int]] = []

    def grown() -> bool:
        samples.append((time.monotonic(), replica_bytes(cluster, node, 0)))
        return samples[-1][1] >= 0.85 * target

    wait_for("the new replica to fill", grown, timeout_s=90)
    t0, n0 = next((t, n) for t, n in samples if n >= 0.25 * target)
    t1, n1 = samples[-1]
    assert n1 - n0 >= 0.2 * target, f"only {n1 - n0} of {target} bytes seen copying"
    return (n1 - n0) / max(t1 - t0, 1e-3)


def test_a_throttled_move_keeps_to_its_rate(cluster: LocalCluster, tmp_path: Path) -> None:
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics([NewTopic(TOPIC, 1, replication_factor=3)])
    wait_for("a leader", lambda: partition_state(cluster)[1] > 0)
    cluster.start([4])
    fill(cluster, [0], 8000)  # about 8 MB to copy, 16 s at the rate
    plan = plan_file(tmp_path, "plan.json", [2, 3, 4])
    with AckedTraffic(cluster.bootstrap, TOPIC, "throttled-") as traffic:
        wait_for("traffic", lambda: len(traffic.acked) > 100)
        target = replica_bytes(cluster, 2, 0)
        started = rillet(
            cluster,
            f"topics reassign --execute --throttle {RATE} --reassignment-json-file {plan}",
        )
        assert started.returncode == 0, started.stderr
        assert f"The inter-broker throttle limit was set to {RATE} B/s" in started.stdout
        rate = copy_rate(cluster, 4, target)
        assert 0.7 * RATE <= rate <= 1.4 * RATE, f"copied at {rate:.0f} B/s"
        wait_for_move(cluster, plan, timeout_s=120)
        acked = len(traffic.acked)
        wait_for("writes after the move", lambda: len(traffic.acked) > acked + 100)
    verify = rillet(cluster, f"topics reassign --verify --reassignment-json-file {plan}")
    assert "Clearing broker-level throttles on brokers 1,2,3,4" in verify.stdout, verify.stdout
    assert partition_state(cluster)[0] == [2, 3, 4]
    assert_exactly_once(read_partition(cluster), traffic.acked)


async def _unregister(bootstrap: str, node: int) -> str:
    async with Admin(bootstrap) as admin:
        try:
            await admin.reassignments().unregister_broker(node)
        except BrokerError as exc:
            return f"{exc.code.name}: {exc}"
    return "unregistered"


def test_add_a_broker_and_rebalance_then_decommission_it(cluster: LocalCluster) -> None:
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics([NewTopic(TOPIC, 6, replication_factor=3)])
        wait_for(
            "every partition led",
            lambda: all(p.leader > 0 for p in admin.describe_topics([TOPIC])[0].partitions),
        )
    fill(cluster, list(range(6)), 600)
    cluster.start([4])
    wait_for("node 4 registered", lambda: 4 in live_brokers(cluster))
    with AckedTraffic(cluster.bootstrap, TOPIC, "rebalance-") as traffic:
        wait_for("traffic", lambda: len(traffic.acked) > 100)
        dry = rillet(cluster, "cluster rebalance --dry-run", 180)
        assert dry.returncode == 0 and "Plan: " in dry.stdout, dry.stdout + dry.stderr
        assert not on_broker(cluster, 4)  # a dry run moves nothing
        done = rillet(cluster, "cluster rebalance --throttle 20000000", 180)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "rebalanced: " in done.stdout and "bytes copied" in done.stdout, done.stdout
        assert len(on_broker(cluster, 4)) in (4, 5)  # its share of 18 replicas
        again = rillet(cluster, "cluster rebalance --dry-run", 180)
        assert "nothing to move" in again.stdout, again.stdout
        acked = len(traffic.acked)
        wait_for("writes after the rebalance", lambda: len(traffic.acked) > acked + 100)
    assert_exactly_once(read_partition(cluster), traffic.acked)

    # Decommission node 4: its replicas move off, it is stopped, then unregistered.
    assert "INVALID_REQUEST" in trio.run(_unregister, cluster.bootstrap, 4)  # still holds some
    lines: list[str] = []
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "rillet.cli.main", "cluster", "decommission", "4"),
            *("--bootstrap", cluster.bootstrap, "--timeout-s", "120"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
    reader.start()
    try:
        wait_for(
            "the moves off node 4",
            lambda: any("waiting for broker 4 to stop" in line for line in lines),
            timeout_s=180,
        )
        assert not on_broker(cluster, 4)
        cluster.stop(4)
        assert proc.wait(timeout=60) == 0, "".join(lines)
    finally:
        proc.kill()
        reader.join(timeout=10)
    assert "broker 4 unregistered\n" in lines, "".join(lines)
    assert "BROKER_ID_NOT_REGISTERED" in trio.run(_unregister, cluster.bootstrap, 4)
    assert "INVALID_REQUEST" in trio.run(_unregister, cluster.bootstrap, 3)
    refused = rillet(cluster, "cluster decommission 3", 180)
    assert refused.returncode == 1 and "only 2 other live brokers remain" in refused.stderr


def on_broker(cluster: LocalCluster, node: int) -> list[int]:
    with BlockingAdmin(cluster.bootstrap) as admin:
        parts = admin.describe_topics([TOPIC])[0].partitions
    return [p.partition for p in parts if node in p.replicas]
