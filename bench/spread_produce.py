"""One producer writing over many partitions: throughput, batching and CPU per record.

For each count in ``--partitions``, starts a local cluster (LocalCluster: real node
processes, the same launcher as ``rillet cluster up``), creates a topic of that many
partitions (replication factor 3 on 3 nodes by default), writes one second of records to it
and waits until the nodes are idle (so opening the logs is not measured), then writes
100-byte acks=all records round robin over the partitions for ``--seconds`` (the record's
partition given, as a keyed producer spreads them) and reports:

- ``records_per_s`` (until the last one is acknowledged);
- ``records_per_batch`` and ``batches_per_request`` (``Producer.send_counts``): round robin
  over many partitions leaves each partition's batch only what arrives while the previous
  one is in flight, so these decide the work per record;
- ``client_cpu_us_per_record`` and ``node_cpu_us_per_record`` (all nodes together, from
  ``/proc/<pid>/stat``) and ``node_cpu_us_per_batch``.

The goal (docs/performance.md): one producer over 1,000 partitions at 80% or more of one.
Each count gets a cluster of its own. Prints one JSON line (see bench/_common.py);
progress goes to stderr.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio
from _common import emit, own_cpu_s, parser, process_cpu_s

from rillet.client import BlockingAdmin, NewTopic, Producer
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

TOPIC = "spread"
VALUE = b"x" * 100
SETTLE_DEADLINE_S = 60.0
# The nodes count as idle once they use less than this share of a core together.
IDLE_CORE_SHARE = 0.15


def node_cpu_s(cluster: LocalCluster) -> float:
    """User and system CPU seconds of every node process so far."""
    return sum(process_cpu_s(cluster.pid(node.node_id)) for node in cluster.plan.nodes)


async def write_round_robin(
    bootstrap: str, topic: str, partitions: int, seconds: float
) -> tuple[int, float, tuple[int, int]]:
    """acks=all records of 100 bytes, round robin over the partitions, for ``seconds``;
    (records, elapsed s until the last was acknowledged, send counts)."""
    sent = 0
    async with Producer(bootstrap, acks="all", delivery_timeout_ms=300_000) as producer:
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            for _ in range(1000):
                await producer.send(topic, VALUE, partition=sent % partitions)
                sent += 1
        await producer.flush()
        return sent, time.monotonic() - start, tuple(producer.send_counts())


def wait_until_idle(cluster: LocalCluster) -> None:
    deadline = time.monotonic() + SETTLE_DEADLINE_S
    while time.monotonic() < deadline:
        before = node_cpu_s(cluster)
        time.sleep(1.0)  # a probe interval of the benchmark, not a wait for an event
        if node_cpu_s(cluster) - before < IDLE_CORE_SHARE:
            return
    print("nodes not idle after the settle deadline; measuring anyway", file=sys.stderr)


def measure(nodes: int, rf: int, partitions: int, seconds: float) -> dict[str, Any]:
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="rillet-spread-"))
        cluster = stack.enter_context(LocalCluster(plan_cluster(Path(tmp), nodes, "")))
        cluster.start()
        with BlockingAdmin(cluster.bootstrap, request_timeout_ms=120_000) as admin:
            admin.create_topics([NewTopic(TOPIC, partitions, rf)], timeout_ms=120_000)
        trio.run(write_round_robin, cluster.bootstrap, TOPIC, partitions, 1.0)
        wait_until_idle(cluster)
        nodes_before, client_before = node_cpu_s(cluster), own_cpu_s()
        records, elapsed_s, (requests, batches) = trio.run(
            write_round_robin, cluster.bootstrap, TOPIC, partitions, seconds
        )
        node_s = node_cpu_s(cluster) - nodes_before
        client_s = own_cpu_s() - client_before
    return {
        "partitions": partitions,
        "records_per_s": round(records / elapsed_s),
        "records_per_batch": round(records / max(batches, 1), 1),
        "batches_per_request": round(batches / max(requests, 1), 1),
        "client_cpu_us_per_record": round(client_s / records * 1e6, 2),
        "node_cpu_us_per_record": round(node_s / records * 1e6, 2),
        "node_cpu_us_per_batch": round(node_s / max(batches, 1) * 1e6, 1),
        "cpu_cores_used": round((node_s + client_s) / elapsed_s, 2),
    }


def main() -> None:
    p = parser(__doc__ or "")
    p.set_defaults(nodes=3, replication_factor=3)
    p.add_argument("--partitions", default="1,1000", help="comma-separated partition counts")
    p.add_argument("--seconds", type=float, default=5.0, help="of writes per count")
    args = p.parse_args()
    results = []
    for count in (int(c) for c in args.partitions.split(",")):
        results.append(measure(args.nodes, args.replication_factor, count, args.seconds))
        print(results[-1], file=sys.stderr)
    base = results[0]["records_per_s"]
    for r in results:
        r["share_of_first"] = round(r["records_per_s"] / base, 2) if base else None
    emit(
        "spread_produce",
        {
            "nodes": args.nodes,
            "replication_factor": args.replication_factor,
            "seconds": args.seconds,
        },
        {"results": results},
    )


if __name__ == "__main__":
    main()
