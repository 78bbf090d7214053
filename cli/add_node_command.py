"""``rillet cluster add-node``: start one more node in the running local cluster.

The node is a broker and a Raft observer (``quorum.observer``): it follows the metadata log
the leader sends it and takes partitions like any broker, without a vote. ``rillet cluster
add-voter N`` makes it a voter. Not for ``--secure`` clusters yet (no certificate is made).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rillet.launcher.added_node import AddNodeError, add_node
from rillet.launcher.local_cluster import CLUSTER_FILE, LocalCluster, load_plan, running_pids
from rillet.launcher.local_node import NodeStartError

DEFAULT_DIR = Path("rillet-cluster")


def register(actions: Any) -> None:
    p = actions.add_parser("add-node", help="start one more node (a broker and Raft observer)")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DIR, help=f"default {DEFAULT_DIR}")
    p.set_defaults(run=run_add_node)


def run_add_node(args: argparse.Namespace) -> int:
    base: Path = args.data_dir.resolve()
    if not (base / CLUSTER_FILE).exists():
        print(f"error: no cluster in {base} (run `rillet cluster up` first)", file=sys.stderr)
        return 1
    plan = load_plan(base)
    if not running_pids(plan):
        print(f"error: the cluster in {base} is not running (`rillet cluster up`)", file=sys.stderr)
        return 1
    try:
        plan, node = add_node(plan)
    except AddNodeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    cluster = LocalCluster(plan, detach=True)
    try:
        cluster.start([node.node_id])
    except NodeStartError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    pid = cluster.pid(node.node_id)
    print(
        f"node {node.node_id}: {node.bootstrap} (raft port {node.raft_port}, pid {pid}), "
        f"an observer: `rillet cluster add-voter {node.node_id}` makes it a voter"
    )
    return 0
