"""How a 3-node cluster copes with many partitions: create, lead, produce, delete.

Starts a local cluster (LocalCluster: real node processes, the same launcher as
``rillet cluster up``) and, for each count in ``--partitions``, creates a topic of that many
partitions with replication factor 3 and measures:

- ``create_s``: the CreateTopics call; ``led_s``: from its start until one acks=all record
  sent to every partition right after it was acknowledged (a partition is led once its
  leader accepts writes and its followers fetch);
- ``produce_one_each_s``: one more acks=all record per partition, on the led topic;
- ``produce_records_per_s``: ``--seconds`` of acks=all writes of 100-byte records spread
  over all partitions;
- ``delete_s``: DeleteTopics;
- while all of this runs, every node is asked for its status (DescribeQuorum, what
  ``rillet cluster status`` shows) every 250 ms with a 1 s deadline, from a process of its
  own (status_poller.py): the slowest answer, how many missed the deadline, and every Raft
  (leader, term) seen (a change is a failure);
- the worst event-loop lag each node logged (its loop-lag monitor), per phase, and the worst
  own lag (the lag less the time the loop's thread waited for a core: what the node's own
  work cost, apart from the other processes sharing the machine's cores);
- each node's RSS before and after the create: memory per partition replica.

Prints one JSON line (see bench/_common.py); progress goes to stderr.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio
from _common import emit, parser
from spread_produce import write_round_robin

from rillet.client import BlockingAdmin, NewTopic, Producer
from rillet.client.errors import RilletError
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

STALL_LINE = re.compile(r"event loop stalled for ([0-9.]+) ms \(([0-9.]+) ms of it waiting")
WINDOW_LINE = re.compile(r"event loop lag max ([0-9.]+) ms, own work ([0-9.]+) ms")


class StatusPoller:
    """The status poller (status_poller.py) in a process of its own, for one phase."""

    def __init__(self, ports: dict[int, int]) -> None:
        self._ports = ports
        self._process: subprocess.Popen[str] | None = None
        self._summary: dict[str, Any] = {}

    def __enter__(self) -> StatusPoller:
        script = Path(__file__).with_name("status_poller.py")
        self._process = subprocess.Popen(
            [sys.executable, str(script), *(str(p) for p in self._ports.values())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        return self

    def __exit__(self, *exc: object) -> None:
        process = self._process
        if process is None:
            return
        try:
            out, _ = process.communicate(input="", timeout=30)
            self._summary = json.loads(out.strip().splitlines()[-1])
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()

    def summary(self) -> dict[str, Any]:
        summary = dict(self._summary)
        summary["raft_leaders_seen"] = [tuple(x) for x in summary.get("raft_leaders_seen", [])]
        return summary


class LagLog:
    """The worst loop lag (and own lag) the nodes logged since the last :meth:`take`."""

    def __init__(self, cluster: LocalCluster, node_ids: list[int]) -> None:
        self._cluster = cluster
        self._offsets = {n: self._size(n) for n in node_ids}

    def _size(self, node_id: int) -> int:
        try:
            return self._cluster.log_path(node_id).stat().st_size
        except OSError:
            return 0

    def take(self, out: dict[str, Any], phase: str) -> None:
        """Record ``lag_<phase>_ms`` and ``own_lag_<phase>_ms`` in ``out``."""
        worst = own = 0.0
        for node_id, offset in self._offsets.items():
            with open(self._cluster.log_path(node_id), "rb") as f:
                f.seek(offset)
                text = f.read().decode(errors="replace")
                self._offsets[node_id] = offset + len(text.encode())
            for match in STALL_LINE.finditer(text):
                lag_ms, wait_ms = float(match.group(1)), float(match.group(2))
                worst, own = max(worst, lag_ms), max(own, lag_ms - wait_ms)
            for match in WINDOW_LINE.finditer(text):
                worst = max(worst, float(match.group(1)))
                own = max(own, float(match.group(2)))
        out[f"lag_{phase}_ms"] = worst
        out[f"own_lag_{phase}_ms"] = round(own, 1)


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


async def one_each(bootstrap: str, topic: str, partitions: int, tag: bytes) -> None:
    """One acks=all record to every partition; returns once all are acknowledged (or fails
    after two minutes)."""
    async with Producer(
        bootstrap, acks="all", request_timeout_ms=60_000, delivery_timeout_ms=120_000
    ) as producer:
        futures = [await producer.send(topic, tag, partition=p) for p in range(partitions)]
        await producer.flush()
        for f in futures:
            f.result()


async def throughput(bootstrap: str, topic: str, partitions: int, seconds: float) -> float:
    """acks=all records of 100 bytes, round robin over the partitions, for ``seconds``."""
    records, elapsed_s, _ = await write_round_robin(bootstrap, topic, partitions, seconds)
    return records / elapsed_s


def measure(
    cluster: LocalCluster, node_ids: list[int], partitions: int, rf: int, seconds: float
) -> dict[str, Any]:
    topic = f"scale-{partitions}"
    lag = LagLog(cluster, node_ids)
    out: dict[str, Any] = {"partitions": partitions}
    ports = {n.node_id: n.port for n in cluster.plan.nodes}
    with (
        StatusPoller(ports) as poller,
        BlockingAdmin(cluster.bootstrap, request_timeout_ms=120_000) as admin,
    ):
        try:
            _phases(cluster, node_ids, admin, topic, partitions, rf, seconds, lag, out)
        except RilletError as exc:  # a failed count is a result too: say what failed
            out["error"] = f"{type(exc).__name__}: {exc}"
            lag.take(out, "until_error")
    out.update(poller.summary())
    out["raft_leader_changed"] = len(out["raft_leaders_seen"]) > 1
    return out


def _phases(
    cluster: LocalCluster,
    node_ids: list[int],
    admin: BlockingAdmin,
    topic: str,
    partitions: int,
    rf: int,
    seconds: float,
    lag: LagLog,
    out: dict[str, Any],
) -> None:
    rss_before = {n: rss_bytes(cluster.pid(n)) for n in node_ids}
    start = time.monotonic()
    admin.create_topics([NewTopic(topic, partitions, rf)], timeout_ms=120_000)
    out["create_s"] = round(time.monotonic() - start, 2)
    print(f"{partitions}: created in {out['create_s']} s", file=sys.stderr)
    trio.run(one_each, cluster.bootstrap, topic, partitions, b"first")
    out["led_s"] = round(time.monotonic() - start, 2)
    lag.take(out, "create")
    print(f"{partitions}: led in {out['led_s']} s", file=sys.stderr)
    start = time.monotonic()
    trio.run(one_each, cluster.bootstrap, topic, partitions, b"second")
    out["produce_one_each_s"] = round(time.monotonic() - start, 2)
    time.sleep(2)  # let followers' memory settle before measuring
    rss_after = {n: rss_bytes(cluster.pid(n)) for n in node_ids}
    replicas_per_node = partitions * rf / len(node_ids)
    out["rss_mib"] = {n: round(v / 2**20, 1) for n, v in rss_after.items()}
    out["rss_per_replica_kib"] = round(
        sum(rss_after[n] - rss_before[n] for n in node_ids)
        / len(node_ids)
        / replicas_per_node
        / 1024,
        1,
    )
    out["produce_records_per_s"] = round(
        trio.run(throughput, cluster.bootstrap, topic, partitions, seconds)
    )
    lag.take(out, "produce")
    print(f"{partitions}: {out['produce_records_per_s']} records/s", file=sys.stderr)
    start = time.monotonic()
    admin.delete_topics([topic], timeout_ms=120_000)
    out["delete_s"] = round(time.monotonic() - start, 2)
    time.sleep(3)  # the nodes remove the partitions after the call returns
    lag.take(out, "delete")


def main() -> None:
    p = parser(__doc__ or "")
    p.set_defaults(nodes=3, replication_factor=3)
    p.add_argument(
        "--partitions",
        default="1,100,1000,10000",
        help="comma-separated partition counts, one topic each (default 1,100,1000,10000)",
    )
    p.add_argument("--seconds", type=float, default=5.0, help="of produce throughput per count")
    p.add_argument(
        "--quorum-config",
        default="",
        help='extra [quorum] lines for every node, e.g. "election_timeout_min_ms = 1000"',
    )
    p.add_argument(
        "--keep-logs",
        default="",
        help="copy each node's log to <KEEP_LOGS>.<node id>.log before the cluster is removed",
    )
    args = p.parse_args()
    counts = [int(c) for c in args.partitions.split(",")]
    results = []
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="rillet-scale-"))
        cluster = stack.enter_context(
            LocalCluster(
                plan_cluster(Path(tmp), args.nodes, args.quorum_config.replace("\\n", "\n")),
                log_level="INFO",
            )
        )
        cluster.start()
        node_ids = [n.node_id for n in cluster.plan.nodes]
        for count in counts:
            results.append(measure(cluster, node_ids, count, args.replication_factor, args.seconds))
            print(results[-1], file=sys.stderr)
        cluster.stop_all()
        if args.keep_logs:  # the loop-lag, garbage-collector and ISR lines, for a closer look
            for n in node_ids:
                shutil.copy(cluster.log_path(n), f"{args.keep_logs}.{n}.log")
    emit(
        "partition_scale",
        {
            "nodes": args.nodes,
            "replication_factor": args.replication_factor,
            "seconds": args.seconds,
            "quorum_config": args.quorum_config,
        },
        {"runs": results},
    )


if __name__ == "__main__":
    main()
