"""Consumer-group benchmark: rebalance times and offset commits/s through the metadata quorum.

A local 3-node cluster (real node processes), a 12-partition topic, and:

- ``--rounds`` times, three members (processes running tests/support/group_member.py) settle,
  then one leaves gracefully (SIGTERM: it commits and leaves the group) or is SIGKILLed; the
  time until the two others own all 12 partitions is the rebalance time (for a kill it
  includes the session timeout, ``--session-ms``);
- offset commits: ``--commit-clients`` clients (each its own connection, like that many
  consumers) send OffsetCommit requests of 12 partitions in a loop for ``--commit-seconds``,
  to groups without members; the coordinator commits concurrent requests together, several
  per metadata-log entry.

Prints one JSON line (see bench/_common.py); progress goes to stderr.
"""

from __future__ import annotations

import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio
from _common import REPO, emit, parser

from rillet.client import Admin, BlockingAdmin, NewTopic
from rillet.client.cluster import ClusterClient
from rillet.launcher.local_cluster import LocalCluster, plan_cluster
from rillet.wire import group_messages as gm

MEMBER = REPO / "tests" / "support" / "group_member.py"
TOPIC, PARTITIONS = "bench-groups", 12


def _settled(bootstrap: str, group: str, count: int) -> bool:
    try:
        with BlockingAdmin(bootstrap) as admin:
            g = admin.describe_group(group)
    except Exception:
        return False
    if len(g.members) != count:
        return False
    owned = [{p for tp in m.owned for p in tp.partitions} for m in g.members]
    targets = [{p for tp in m.target for p in tp.partitions} for m in g.members]
    return owned == targets and set().union(*owned) == set(range(PARTITIONS))


def _wait(what: str, probe: Any, timeout_s: float = 60.0) -> float:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if probe():
            return time.monotonic()
        time.sleep(0.01)
    raise RuntimeError(f"timed out waiting for {what}")


def rebalance_round(base: Path, bootstrap: str, group: str, kill: bool, session_ms: int) -> float:
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(MEMBER),
                bootstrap,
                group,
                TOPIC,
                str(base / f"{group}-{i}.jsonl"),
                str(session_ms),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i in range(3)
    ]
    try:
        _wait("three settled members", lambda: _settled(bootstrap, group, 3))
        started = time.monotonic()
        procs[0].send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        done = _wait("two members owning everything", lambda: _settled(bootstrap, group, 2))
        return done - started
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait(10)


async def commit_rate(bootstrap: str, clients: int, seconds: float) -> float:
    """``clients`` consumers (each its own connection) committing 12 partitions in a loop."""
    done = 0

    async def client(i: int) -> None:
        nonlocal done
        group = f"bench-commits-{i % 8}"
        async with ClusterClient(bootstrap) as cluster:
            found = await cluster.request_any(gm.FindCoordinatorRequest(group))
            conn = await cluster.coordinator_connection(found.node_id, found.host, found.port)
            n = 0
            while trio.current_time() < deadline:
                n += 1
                offsets = [gm.OffsetCommitPartition(TOPIC, p, n) for p in range(PARTITIONS)]
                response = await conn.request(gm.OffsetCommitRequest(group, "", -1, offsets), 30)
                if response.error_code == 0:
                    done += 1

    started = trio.current_time()
    deadline = started + seconds
    async with trio.open_nursery() as nursery:
        for i in range(clients):
            nursery.start_soon(client, i)
    return done / (trio.current_time() - started)


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--session-ms", type=int, default=3000)
    p.add_argument("--commit-clients", type=int, default=64)
    p.add_argument("--commit-seconds", type=float, default=5.0)
    args = p.parse_args()
    if args.bootstrap:
        p.error("this bench runs its own cluster; --bootstrap does not apply")
    leave_s: list[float] = []
    kill_s: list[float] = []
    with tempfile.TemporaryDirectory(prefix="rillet-groups-bench-") as tmp:
        base = Path(tmp)
        with LocalCluster(plan_cluster(base / "cluster", 3), log_level="WARNING") as cluster:
            cluster.start()

            async def create() -> None:
                async with Admin(cluster.bootstrap) as admin:
                    await admin.create_topics([NewTopic(TOPIC, PARTITIONS, 3)])

            trio.run(create)
            for r in range(args.rounds):
                leave_s.append(
                    rebalance_round(base, cluster.bootstrap, f"leave-{r}", False, args.session_ms)
                )
                kill_s.append(
                    rebalance_round(base, cluster.bootstrap, f"kill-{r}", True, args.session_ms)
                )
                leave_ms, kill_ms = leave_s[-1] * 1000, kill_s[-1] * 1000
                print(
                    f"round {r + 1}: leave {leave_ms:.0f} ms, kill {kill_ms:.0f} ms",
                    file=sys.stderr,
                )
            rate = trio.run(
                commit_rate, cluster.bootstrap, args.commit_clients, args.commit_seconds
            )
            print(f"offset commits: {rate:.0f} requests/s", file=sys.stderr)
    emit(
        "consumer_groups",
        {**vars(args), "nodes": 3, "partitions": PARTITIONS},
        {
            "rebalance_after_leave_ms": [round(s * 1000) for s in leave_s],
            "rebalance_after_kill_ms": [round(s * 1000) for s in kill_s],
            "rebalance_after_leave_ms_median": round(statistics.median(leave_s) * 1000),
            "rebalance_after_kill_ms_median": round(statistics.median(kill_s) * 1000),
            "offset_commit_requests_per_s": round(rate),
        },
    )


if __name__ == "__main__":
    main()
