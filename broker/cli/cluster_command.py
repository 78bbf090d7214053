"""``rillet cluster up|status|down``: a local multi-node cluster in one command.

``up`` plans the cluster in ``--data-dir`` (configs, secret, fixed loopback ports) the first
time, starts every node as a background process, waits until a Raft leader exists and every
broker is registered and unfenced, and prints the endpoints. Run again after ``down``, it
restarts the same cluster with its data. ``status`` asks each node for its view of the
quorum (DescribeQuorum); ``down`` stops the nodes with SIGTERM (controlled shutdown) and
keeps the data unless ``--purge``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from rillet.broker.cli.common import positive_int, run_async
from rillet.client.connection import BrokerConnection
from rillet.client.errors import ClientTimeoutError, ConnectionFailedError, RilletError
from rillet.launcher.local_cluster import (
    CLUSTER_FILE,
    LocalCluster,
    load_plan,
    plan_cluster,
    running_pids,
)
from rillet.launcher.local_node import STOP_TIMEOUT_S, NodeStartError
from rillet.wire.cluster_messages import DescribeQuorumRequest, DescribeQuorumResponse

DEFAULT_DIR = Path("rillet-cluster")
STATUS_TIMEOUT_S = 5.0


def register(sub: Any) -> None:
    p = sub.add_parser("cluster", help="run a local multi-node cluster in the background")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    up = actions.add_parser("up", help="start (or restart) the cluster and wait until ready")
    up.add_argument("--nodes", type=positive_int, default=3, help="voters to plan (default 3)")
    up.add_argument("--data-dir", type=Path, default=DEFAULT_DIR, help=f"default {DEFAULT_DIR}")
    up.set_defaults(run=run_up)
    status = actions.add_parser("status", help="leader, term, voters, brokers, partitions")
    status.add_argument("--data-dir", type=Path, default=DEFAULT_DIR)
    status.set_defaults(run=run_status)
    down = actions.add_parser("down", help="stop every node (data is kept unless --purge)")
    down.add_argument("--data-dir", type=Path, default=DEFAULT_DIR)
    down.add_argument("--purge", action="store_true", help="also delete the cluster directory")
    down.set_defaults(run=run_down)


def run_up(args: argparse.Namespace) -> int:
    base: Path = args.data_dir.resolve()
    if (base / CLUSTER_FILE).exists():
        plan = load_plan(base)
        if running_pids(plan):
            if plan.kafka_bootstrap:
                print(f"kafka bootstrap servers: {plan.kafka_bootstrap}")
            print(f"cluster in {base} is already running: {plan.bootstrap}")
            return 0
        if len(plan.nodes) != args.nodes:
            print(f"note: {base} holds a {len(plan.nodes)}-node cluster; restarting it as is")
    else:
        plan = plan_cluster(base, args.nodes)
    cluster = LocalCluster(plan, detach=True)
    started = time.monotonic()
    try:
        cluster.start()
    except NodeStartError as exc:
        print(f"error: {exc}", file=sys.stderr)
        _terminate(running_pids(plan))
        return 1
    print(f"cluster {plan.cluster_id} up in {time.monotonic() - started:.1f}s, data in {base}")
    for n in plan.nodes:
        pid = cluster.pid(n.node_id)
        print(f"  node {n.node_id}: {n.bootstrap} (raft port {n.raft_port}, pid {pid})")
    if plan.metrics_urls:
        print(f"metrics endpoints: {plan.metrics_urls}")
    if plan.kafka_bootstrap:
        print(f"kafka bootstrap servers: {plan.kafka_bootstrap}")
    print(f"bootstrap servers: {plan.bootstrap}")  # the last line: scripts take it
    return 0


def run_status(args: argparse.Namespace) -> int:
    base: Path = args.data_dir.resolve()
    if not (base / CLUSTER_FILE).exists():
        print(f"error: no cluster in {base} (run `rillet cluster up` first)", file=sys.stderr)
        return 1
    plan = load_plan(base)
    probes = probe_nodes([(n.node_id, n.port) for n in plan.nodes])
    views = {nid: p.view for nid, p in probes.items()}
    alive = running_pids(plan)
    answered = {nid: v for nid, v in views.items() if v is not None}
    if not answered:
        print(no_answer_line(probes, alive))
        return 1
    best = max(answered.values(), key=lambda v: (v.leader_id >= 0, v.applied_index))
    leader = best.leader_id if best.leader_id >= 0 else "none"
    print(f"cluster {plan.cluster_id}: leader {leader}, term {best.term}, voters {best.voters}")
    print(f"metadata applied through index {best.applied_index} (as seen by node {best.node_id})")
    print("node  listener          process  raft view")
    for n in plan.nodes:
        v = views.get(n.node_id)
        proc = f"pid {alive[n.node_id]}" if n.node_id in alive else "stopped"
        failure = probes[n.node_id].failure if n.node_id in probes else None
        view = (
            f"leader {v.leader_id}, term {v.term}, applied {v.applied_index}"
            if v
            else (failure or "-")
        )
        print(f"{n.node_id:<5} {n.bootstrap:<17} {proc:<8} {view}")
    print("brokers:")
    for b in best.brokers:
        state = "fenced" if b.fenced else "unfenced"
        print(f"  {b.broker_id}: {b.host}:{b.port} epoch {b.broker_epoch} {state}")
    print(f"topics: {best.topics}, partitions: {best.partitions}")
    if best.leaderless_partitions:
        print(f"partitions without a leader: {', '.join(best.leaderless_partitions)}")
    else:
        print("every partition has a leader")
    return 0


@dataclass(frozen=True, slots=True)
class NodeProbe:
    """One node's DescribeQuorum answer, or why there is none: the connection failed
    (REFUSED: no process listens) or it was accepted but not answered in time (BUSY: a
    process that is alive but paused or overloaded; the kernel accepts for it)."""

    view: DescribeQuorumResponse | None
    failure: str | None = None


REFUSED = "unreachable (connection refused)"
BUSY = f"busy (no answer in {STATUS_TIMEOUT_S:g}s)"


def no_answer_line(probes: dict[int, NodeProbe], alive: dict[int, int]) -> str:
    """What to say when no node answered: down only when none could be reached at all."""
    busy = sorted(nid for nid, p in probes.items() if p.failure == BUSY)
    if not busy:
        return "no node reachable (connections refused): the cluster is down"
    running = sorted(set(alive) | set(busy))
    listed = ", ".join(map(str, busy))
    return (
        f"no node answered within {STATUS_TIMEOUT_S:g}s, but node(s) {listed} accepted the "
        f"connection: {len(running)} node(s) are running but busy (paused, or overloaded); "
        "try again, or check their logs"
    )


def probe_nodes(targets: list[tuple[int, int]]) -> dict[int, NodeProbe]:
    """Each node's DescribeQuorum answer (or why none came), by node id."""
    probes: dict[int, NodeProbe] = {}

    async def ask(node_id: int, port: int) -> None:
        try:
            async with trio.open_nursery() as nursery:
                conn = BrokerConnection("127.0.0.1", port, client_id="rillet-cluster-status")
                try:
                    await conn.connect(nursery, STATUS_TIMEOUT_S)
                except ConnectionFailedError:
                    probes[node_id] = NodeProbe(None, REFUSED)
                    return
                try:
                    view = await conn.request(DescribeQuorumRequest(), STATUS_TIMEOUT_S)
                    probes[node_id] = NodeProbe(view)
                finally:
                    conn.close()
        except* ClientTimeoutError:
            probes[node_id] = NodeProbe(None, BUSY)
        except* RilletError:  # the nursery wraps failures in an ExceptionGroup
            probes.setdefault(node_id, NodeProbe(None, REFUSED))

    async def main() -> int:
        async with trio.open_nursery() as nursery:
            for node_id, port in targets:
                nursery.start_soon(ask, node_id, port)
        return 0

    run_async(main)
    return probes


def describe_nodes(targets: list[tuple[int, int]]) -> dict[int, DescribeQuorumResponse | None]:
    """Each node's DescribeQuorum answer by node id (None when it did not answer)."""
    return {nid: p.view for nid, p in probe_nodes(targets).items()}


def run_down(args: argparse.Namespace) -> int:
    base: Path = args.data_dir.resolve()
    if not (base / CLUSTER_FILE).exists():
        print(f"no cluster in {base}")
        return 0
    plan = load_plan(base)
    pids = running_pids(plan)
    _terminate(pids)
    print(f"stopped {len(pids)} node(s)" + ("" if pids else ": none was running"))
    if args.purge:
        shutil.rmtree(base)
        print(f"removed {base}")
    return 0


def _terminate(pids: dict[int, int]) -> None:
    """SIGTERM every node (they hand over leadership), SIGKILL whatever overstays."""
    for pid in pids.values():
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline and any(_exists(p) for p in pids.values()):
        time.sleep(0.05)
    for pid in pids.values():
        if _exists(pid):
            _signal(pid, signal.SIGKILL)


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A detached node is not our child, but a zombie child of ours would still "exist".
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.split(")")[-1].split()[0] != "Z"
