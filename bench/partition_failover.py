"""Write availability when a partition leader dies: the longest gap with no acknowledged write.

A local 3-node cluster (LocalCluster: real node processes), one topic of one partition with
replication factor 3, one idempotent acks=all producer writing in a steady loop (``--rate``
records/s). ``--kills`` times, SIGKILL the partition's leader, measure the longest time
between two consecutive acknowledgements around the kill, restart the node and wait until
the ISR is full again. Also checks, at the end, that every acknowledged record is readable
exactly once. The JSON says for each kill whether the partition leader was also the Raft
leader (the controller): then a controller election comes on top.

``--victim controller`` kills the node that is both Raft leader and partition leader every
time: the topic then has 3 partitions (their leaders spread over the nodes), the producer
writes to all of them in turn, and the gap is measured on the partition the killed node led.
Prints one JSON line (see bench/_common.py); progress goes to stderr.
"""

from __future__ import annotations

import itertools
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import emit, parser

from rillet.cli.cluster_command import describe_nodes
from rillet.client import (
    BlockingAdmin,
    BlockingConsumer,
    BlockingProducer,
    NewTopic,
    TopicPartition,
)
from rillet.client.errors import RilletError
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

TOPIC = "failover"


class Writer:
    """A producer thread that records the time of every acknowledgement."""

    def __init__(
        self, bootstrap: str, rate: float, retry_backoff_max_ms: int, partitions: int = 1
    ) -> None:
        self.acks: list[float] = []
        self.acks_of: dict[int, list[float]] = {p: [] for p in range(partitions)}
        self._partitions = partitions
        self.values: dict[bytes, int] = {}
        self.failed = 0
        self._bootstrap = bootstrap
        self._interval_s = 1 / rate
        self._backoff_max_ms = retry_backoff_max_ms
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Writer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(60)

    def _run(self) -> None:
        with BlockingProducer(
            self._bootstrap,
            acks="all",
            linger_ms=0,
            retry_backoff_ms=20,
            retry_backoff_max_ms=self._backoff_max_ms,
        ) as producer:
            pending: list[tuple[bytes, Any]] = []
            i = 0
            next_at = time.monotonic()
            while not self._stop.is_set():
                value = f"{i:012d}".encode()
                i += 1
                partition = i % self._partitions
                future = producer.send(TOPIC, value, partition=partition)
                future.add_done_callback(lambda f, v=value, p=partition: self._done(v, p, f))
                pending.append((value, future))
                next_at += self._interval_s
                delay = next_at - time.monotonic()
                if delay > 0:
                    self._stop.wait(delay)
            producer.flush()

    def _done(self, value: bytes, partition: int, future: Any) -> None:
        try:
            md = future.result()
        except RilletError:
            self.failed += 1
            return
        now = time.monotonic()
        self.acks.append(now)
        self.acks_of[partition].append(now)
        self.values[value] = md.offset

    def longest_gap_s(self, start: float, end: float, partition: int | None = None) -> float:
        acks = self.acks if partition is None else self.acks_of[partition]
        times = sorted(t for t in acks if start <= t <= end)
        return max((b - a for a, b in itertools.pairwise(times)), default=end - start)


def read_back(bootstrap: str, partitions: int, acked: dict[bytes, int]) -> tuple[int, int]:
    """(lost, duplicated): acknowledged values missing from the topic, and values read twice."""
    with BlockingConsumer(bootstrap) as consumer:
        tps = [TopicPartition(TOPIC, q) for q in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        seen: dict[bytes, int] = {}
        duplicates = 0
        deadline = time.monotonic() + 60
        while len(seen) < len(acked) and time.monotonic() < deadline:
            for r in consumer.poll(timeout_ms=200):
                if r.value in acked:
                    duplicates += r.value in seen
                    seen[r.value] = r.offset
    return sum(1 for v in acked if v not in seen), duplicates


def _poll(what: str, probe: Any, timeout_s: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.02)
    raise RuntimeError(f"timed out waiting for {what}")


def _partition(bootstrap: str, partition: int = 0) -> Any:
    with BlockingAdmin(bootstrap) as admin:
        return admin.describe_topics([TOPIC])[0].partitions[partition]


def _raft_leader(plan: Any) -> int | None:
    nodes = [(n.node_id, n.port) for n in plan.nodes]
    leaders = {v.leader_id for v in describe_nodes(nodes).values() if v}
    return leaders.pop() if len(leaders) == 1 else None


def _controller_led_partition(bootstrap: str, plan: Any, partitions: int) -> Any:
    """(controller, partition) when the Raft leader leads one of the topic's partitions."""
    controller = _raft_leader(plan)
    for p in range(partitions):
        if controller is not None and _partition(bootstrap, p).leader == controller:
            return controller, p
    return None


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--kills", type=int, default=5)
    p.add_argument("--rate", type=float, default=1000.0, help="records/s (default 1000)")
    p.add_argument("--retry-backoff-max-ms", type=int, default=100)
    p.add_argument(
        "--victim",
        choices=("leader", "controller"),
        default="leader",
        help="kill the partition leader (default), or the node leading the Raft quorum and a "
        "partition",
    )
    args = p.parse_args()
    partitions = 3 if args.victim == "controller" else 1
    if args.bootstrap:
        p.error("this bench runs its own cluster; --bootstrap does not apply")
    gaps: list[float] = []
    also_controller: list[bool] = []  # the killed leader was also the Raft leader
    with tempfile.TemporaryDirectory(prefix="rillet-failover-") as tmp:
        plan = plan_cluster(Path(tmp), 3)
        with LocalCluster(plan, log_level="WARNING") as cluster:
            cluster.start()
            with BlockingAdmin(cluster.bootstrap) as admin:
                admin.create_topics([NewTopic(TOPIC, partitions, replication_factor=3)])

            def full_isrs() -> bool:
                return all(
                    len(_partition(cluster.bootstrap, q).isr) == 3 for q in range(partitions)
                )

            _poll("full ISRs", full_isrs)
            with Writer(
                cluster.bootstrap, args.rate, args.retry_backoff_max_ms, partitions
            ) as writer:
                _poll("writes", lambda: len(writer.acks) > args.rate)
                for kill in range(args.kills):
                    partition = 0
                    if args.victim == "controller":
                        # Leadership returns to the preferred replicas within the rebalance
                        # interval (10 s), so the controller soon leads one of them.
                        _, partition = _poll(
                            "a controller leading a partition",
                            lambda: _controller_led_partition(cluster.bootstrap, plan, partitions),
                            60,
                        )
                    leader = _partition(cluster.bootstrap, partition).leader
                    raft_leaders = {_raft_leader(plan)}
                    killed_at = time.monotonic()
                    cluster.kill(leader)
                    others = ",".join(
                        cluster.plan.node(i).bootstrap for i in (1, 2, 3) if i != leader
                    )
                    _poll(
                        "a new leader",
                        lambda o=others, v=leader, q=partition: _partition(o, q).leader != v,
                    )
                    _poll(
                        "writes again",
                        lambda t=killed_at, q=partition: any(a > t + 1 for a in writer.acks_of[q]),
                    )
                    gap = writer.longest_gap_s(killed_at - 1, time.monotonic(), partition)
                    gaps.append(gap)
                    also_controller.append(raft_leaders == {leader})
                    print(
                        f"kill {kill + 1}: node {leader} (controller too: {also_controller[-1]}),"
                        f" gap {gap * 1000:.0f} ms",
                        file=sys.stderr,
                    )
                    cluster.spawn(leader)
                    cluster.wait_ready([leader])
                    _poll("full ISRs", full_isrs, 60)
            acked = dict(writer.values)
            lost, duplicates = read_back(cluster.bootstrap, partitions, acked)
    emit(
        "partition_failover",
        {**vars(args), "nodes": 3, "replication_factor": 3, "partitions": partitions},
        {
            "write_gap_ms": [round(g * 1000, 1) for g in gaps],
            "killed_was_controller": also_controller,
            "write_gap_ms_median": round(statistics.median(gaps) * 1000, 1) if gaps else None,
            "write_gap_ms_max": round(max(gaps) * 1000, 1) if gaps else None,
            "acknowledged": len(acked),
            "failed": writer.failed,
            "lost": lost,
            "duplicates": duplicates,
        },
    )


if __name__ == "__main__":
    main()
