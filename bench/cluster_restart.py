"""Whole-cluster restart: from the last node started to the first acknowledged write.

A local 3-node cluster (real node processes), one topic of ``--partitions`` partitions with
replication factor 3 and ``--preload-mb`` of records in it (so log recovery has work to do),
and one acks=all producer writing to every partition in a steady loop. ``--runs`` times: kill
all three nodes at once (SIGKILL), start them again, and measure, per partition, the time from
the moment the last node was started to that partition's first acknowledged write; the run's
figure is the worst partition's. The breakdown comes from the nodes' own log lines (the node
that became ready last): interpreter start and imports (to "open-file limit"), quorum start
and listeners (to "http endpoint"), the Raft election (to "controller active" on the new Raft
leader), registration with the controller ("registered as broker"), unfencing, partitions
opened and metadata caught up ("listening on"), and the rest until the first acknowledgement
(client backoff and leader elections of the partitions). At the end, every acknowledged record
is read back: the JSON gives the number lost and duplicated (both must be 0). Prints one JSON
line (bench/_common.py).
"""

from __future__ import annotations

import re
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from _common import emit, parser
from partition_failover import TOPIC, Writer, read_back

from rillet.client import BlockingAdmin, BlockingProducer, NewTopic
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

NODES = (1, 2, 3)
POLL_S = 0.02
RESTART_TIMEOUT_S = 120.0
PRELOAD_RECORD_BYTES = 1000
# Log lines that mark the steps of a node's start, in order.
STEPS = (
    ("imports", "open-file limit"),
    ("quorum_and_listeners", "http endpoint on"),
    ("registered", "registered as broker"),
    ("unfenced", "broker unfenced"),
    ("ready", " listening on "),
)
ELECTION_LINE = "controller active for term"
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")


def _stamp_s(line: str) -> float | None:
    match = _STAMP.match(line)
    if match is None:
        return None
    return datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()


def _step_times(text: str) -> dict[str, float]:
    """Wall-clock time of the first line of each step (and of the election) in a log slice."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        stamp = _stamp_s(line)
        if stamp is None:
            continue
        for name, marker in (*STEPS, ("election", ELECTION_LINE)):
            if name not in found and marker in line:
                found[name] = stamp
    return found


def _preload(bootstrap: str, partitions: int, megabytes: int) -> None:
    value = b"p" * PRELOAD_RECORD_BYTES
    with BlockingProducer(bootstrap, acks="all", linger_ms=5) as producer:
        for i in range(megabytes * 1_000_000 // PRELOAD_RECORD_BYTES):
            producer.send(TOPIC, value, partition=i % partitions)
        producer.flush()


def _restart_once(cluster: LocalCluster, writer: Writer, partitions: int) -> dict[str, Any]:
    offsets = {n: cluster.log_path(n).stat().st_size for n in NODES}
    cluster.kill_all()
    for n in NODES:
        cluster.spawn(n)
    started_wall = time.time()
    started = time.monotonic()
    deadline = started + RESTART_TIMEOUT_S
    firsts: dict[int, float] = {}
    while len(firsts) < partitions:
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"no write on partitions {sorted(set(range(partitions)) - set(firsts))}"
            )
        for p in range(partitions):
            if p not in firsts:
                after = [t for t in writer.acks_of[p] if t > started]
                if after:
                    firsts[p] = min(after)
        time.sleep(POLL_S)
    cluster.wait_ready(NODES)
    per_partition_s = {p: round(t - started, 3) for p, t in sorted(firsts.items())}
    steps = {}
    for n in NODES:
        with cluster.log_path(n).open() as log:
            log.seek(offsets[n])
            steps[n] = {k: round(v - started_wall, 3) for k, v in _step_times(log.read()).items()}
    last = max(NODES, key=lambda n: steps[n].get("ready", float("inf")))
    elections = [s["election"] for s in steps.values() if "election" in s]
    return {
        "first_ack_s": max(per_partition_s.values()),
        "first_ack_per_partition_s": per_partition_s,
        "last_ready_node": last,
        "steps_of_last_ready_node_s": steps[last],
        "raft_election_done_s": min(elections) if elections else None,
        "steps_per_node_s": steps,
    }


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--partitions", type=int, default=6)
    p.add_argument("--preload-mb", type=int, default=50, help="MB written before the first kill")
    p.add_argument("--rate", type=float, default=500.0, help="records/s during the runs")
    p.add_argument("--retry-backoff-max-ms", type=int, default=100)
    args = p.parse_args()
    if args.bootstrap:
        p.error("this bench runs its own cluster; --bootstrap does not apply")
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rillet-restart-") as tmp:
        plan = plan_cluster(Path(tmp), len(NODES))
        with LocalCluster(plan, log_level="INFO") as cluster:
            cluster.start()
            with BlockingAdmin(cluster.bootstrap) as admin:
                admin.create_topics([NewTopic(TOPIC, args.partitions, replication_factor=3)])
            _preload(cluster.bootstrap, args.partitions, args.preload_mb)
            with Writer(
                cluster.bootstrap, args.rate, args.retry_backoff_max_ms, args.partitions
            ) as writer:
                deadline = time.monotonic() + 30
                while len(writer.acks) < args.rate and time.monotonic() < deadline:
                    time.sleep(POLL_S)
                for run in range(args.runs):
                    result = _restart_once(cluster, writer, args.partitions)
                    runs.append(result)
                    print(f"run {run + 1}: first ack {result['first_ack_s']} s", file=sys.stderr)
                    time.sleep(2)  # let the producer settle on the new leaders
            lost, duplicates = read_back(cluster.bootstrap, args.partitions, dict(writer.values))
    firsts = [r["first_ack_s"] for r in runs]
    emit(
        "cluster_restart",
        vars(args) | {"nodes": len(NODES)},
        {
            "first_ack_s_median": statistics.median(firsts),
            "first_ack_s_max": max(firsts),
            "acknowledged": len(writer.values),
            "lost": lost,
            "duplicates": duplicates,
            "failed_sends": writer.failed,
            "runs": runs,
        },
    )


if __name__ == "__main__":
    main()
