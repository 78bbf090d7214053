"""How fast a partition moves, unthrottled and throttled, and what a throttled move costs
``acks=all`` producers.

A local cluster of three voters and a broker-only node 4 (real node processes). Topic
``big``: one partition, replication factor 3 on nodes 1-3, filled with ``--size-mb`` of
1 KiB records. Then:

1. **Unthrottled**: move it to {2,3,4}; the copy time is from the move's start until node
   4's copy is as large as the leader's (file sizes, polled every 20 ms): MB/s.
2. **Throttled**: move it back to {1,2,3} with ``--throttle`` (Kafka's four settings, as
   ``rillet topics reassign --throttle`` sets them): the copy time against size / rate.
3. **Produce latency**: a producer writes ``--rate`` records/s with ``acks=all`` to another
   topic (replication factor 3) for ``--window-s`` while idle, then during a throttled move
   (to {2,3,4} again): p50/p99 of each.

Prints one JSON line (bench/_common.py); progress goes to stderr. The default size is
small for a shared 2-core machine; ``--size-mb 1024`` is the 1 GiB case.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import trio
from _common import emit, parser

from rillet.cli.move_throttles import clear_throttles, set_throttles
from rillet.cli.reassign_plan import PlannedMove
from rillet.client import Admin, BlockingAdmin, BlockingProducer, NewTopic
from rillet.launcher.local_cluster import LocalCluster, plan_cluster
from rillet.wire.reassignment_messages import PartitionMove

TOPIC, PROBE = "big", "probe"
CONFIG = "broker_session_timeout_ms = 4000\n"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def size_on(cluster: LocalCluster, node: int) -> int:
    d = Path(cluster.plan.node(node).work_dir) / "data" / f"{TOPIC}-0"
    if not d.exists():
        return 0
    return sum(f.stat().st_size for f in d.iterdir() if f.suffix == ".log")


async def _move(bootstrap: str, to: tuple[int, ...], throttle: int | None) -> None:
    async with Admin(bootstrap) as admin:
        now = [
            PlannedMove(TOPIC, p.partition, tuple(p.replicas))
            for t in await admin.describe_topics([TOPIC])
            for p in t.partitions
        ]
        plan = [PlannedMove(TOPIC, 0, to)]
        if throttle is not None:
            await set_throttles(admin, now, plan, throttle)
        await admin.reassignments().alter([PartitionMove(TOPIC, 0, list(to))])


async def _done(bootstrap: str) -> bool:
    async with Admin(bootstrap) as admin:
        return not await admin.reassignments().ongoing([(TOPIC, 0)])


async def _clear(bootstrap: str) -> None:
    async with Admin(bootstrap) as admin:
        await clear_throttles(admin, [TOPIC])


def timed_move(
    cluster: LocalCluster, to: tuple[int, ...], joining: int, target: int, throttle: int | None
) -> float:
    began = time.monotonic()
    trio.run(_move, cluster.bootstrap, to, throttle)
    deadline = began + 900
    while size_on(cluster, joining) < target and time.monotonic() < deadline:
        time.sleep(0.02)
    took = time.monotonic() - began
    while not trio.run(_done, cluster.bootstrap) and time.monotonic() < deadline:
        time.sleep(0.2)
    trio.run(_clear, cluster.bootstrap)
    return took


class Prober:
    """acks=all writes at a steady rate; the latency of each."""

    def __init__(self, bootstrap: str, rate: float) -> None:
        self.latencies_ms: list[float] = []
        self._stop = threading.Event()
        self._interval_s = 1 / rate
        self._thread = threading.Thread(target=self._run, args=(bootstrap,), daemon=True)

    def _run(self, bootstrap: str) -> None:
        with BlockingProducer(bootstrap, acks="all", linger_ms=0) as producer:
            while not self._stop.is_set():
                sent = time.monotonic()
                producer.send(PROBE, b"p" * 100).result(timeout=30)
                self.latencies_ms.append((time.monotonic() - sent) * 1000)
                time.sleep(max(0.0, self._interval_s - (time.monotonic() - sent)))

    def window(self, seconds: float) -> list[float]:
        start = len(self.latencies_ms)
        time.sleep(seconds)
        return self.latencies_ms[start:]

    def __enter__(self) -> Prober:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)


def pct(values: list[float], q: float) -> float | None:
    if len(values) < 2:
        return None
    return round(statistics.quantiles(values, n=100)[int(q) - 1], 2)


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--size-mb", type=int, default=128, help="partition size (default 128)")
    p.add_argument("--throttle", type=int, default=0, help="bytes/s (default: size / 8 s)")
    p.add_argument("--rate", type=float, default=100.0, help="probe records/s (default 100)")
    p.add_argument("--window-s", type=float, default=6.0, help="latency window (default 6)")
    args = p.parse_args()
    throttle = args.throttle or args.size_mb * 1024 * 1024 // 8
    with (
        tempfile.TemporaryDirectory() as tmp,
        LocalCluster(plan_cluster(Path(tmp), 3, CONFIG, broker_only=1)) as cluster,
    ):
        result = measure(cluster, args.size_mb, throttle, args.rate, args.window_s)
    emit("partition_move", vars(args) | {"bootstrap": None}, result)


def measure(
    cluster: LocalCluster, size_mb: int, throttle: int, rate: float, window_s: float
) -> dict[str, Any]:
    size = size_mb * 1024 * 1024
    cluster.start([1, 2, 3])
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics([NewTopic(TOPIC, 1, replication_factor=3)])
        admin.create_topics([NewTopic(PROBE, 1, replication_factor=3)])
    cluster.start([4])
    log(f"writing {size_mb} MiB")
    value = b"x" * 1024
    with BlockingProducer(cluster.bootstrap, acks="1", linger_ms=20) as producer:
        for _ in range(size // len(value)):
            producer.send(TOPIC, value, partition=0)
        producer.flush()
    target = size_on(cluster, 1)
    log(f"partition holds {target} bytes; moving unthrottled")
    free_s = timed_move(cluster, (2, 3, 4), 4, target, None)
    log(f"unthrottled: {free_s:.1f} s; moving back at {throttle} B/s")
    slow_s = timed_move(cluster, (1, 2, 3), 1, target, throttle)
    expected_s = max((target - throttle) / throttle, 1e-3)  # less the one second's burst
    log(f"throttled: {slow_s:.1f} s (expected {expected_s:.1f} s); latency windows")
    with Prober(cluster.bootstrap, rate) as prober:
        prober.window(2.0)  # warm up
        idle = prober.window(window_s)
        trio.run(_move, cluster.bootstrap, (2, 3, 4), throttle)
        moving = prober.window(window_s)
    trio.run(_clear, cluster.bootstrap)
    return {
        "partition_bytes": target,
        "unthrottled_move_s": round(free_s, 2),
        "unthrottled_mb_per_s": round(target / free_s / 1e6, 1),
        "throttle_bytes_per_s": throttle,
        "throttled_move_s": round(slow_s, 2),
        "throttled_expected_s": round(expected_s, 2),
        "throttled_time_ratio": round(slow_s / expected_s, 3),
        "idle_produce_p50_ms": pct(idle, 50),
        "idle_produce_p99_ms": pct(idle, 99),
        "moving_produce_p50_ms": pct(moving, 50),
        "moving_produce_p99_ms": pct(moving, 99),
    }


if __name__ == "__main__":
    main()
