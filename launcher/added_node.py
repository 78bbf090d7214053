"""One more node for a planned local cluster, as a Raft observer and broker (``rillet cluster
add-node``).

Its config is the first node's with this node's id, directory and ports, and
``quorum.observer`` on: it lists the same voters (how it reaches the cluster), runs a Raft
replica without a vote on its own Raft port, follows the metadata log the leader sends it
and registers as a broker. ``rillet cluster add-voter N`` then makes it a voter.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, replace
from pathlib import Path

from rillet.launcher.local_cluster import CLUSTER_FILE, ClusterPlan, NodePlan, _free_ports
from rillet.launcher.private_files import private_dir


class AddNodeError(Exception):
    """The cluster cannot get one more node this way (one-line reason)."""


def add_node(plan: ClusterPlan) -> tuple[ClusterPlan, NodePlan]:
    """Plan node max(id) + 1 beside ``plan``'s nodes, write its config and the new plan."""
    if plan.tls is not None:
        raise AddNodeError("add-node does not make TLS certificates yet: not for --secure")
    first = plan.nodes[0]
    template = (Path(first.work_dir) / "node.toml").read_text()
    node_id = max(n.node_id for n in plan.nodes) + 1
    port, raft_port, kafka_port, http_port = _free_ports(4)
    work = Path(plan.base_dir) / f"node{node_id}"
    new = replace(
        first,
        node_id=node_id,
        port=port,
        raft_port=raft_port,
        work_dir=str(work),
        kafka_port=kafka_port if first.kafka_port >= 0 else -1,
        http_port=http_port if first.http_port >= 0 else -1,
    )
    text = re.sub(r"(?m)^node_id = \d+$", f"node_id = {node_id}", template, count=1)
    text = text.replace(
        f'data_dir = "{Path(first.work_dir) / "data"}"', f'data_dir = "{work / "data"}"'
    )
    text = _retable(text, "listener", first.port, port)
    text = _retable(text, "kafka_listener", first.kafka_port, kafka_port)
    text = _retable(text, "http", first.http_port, http_port)
    text = text.replace("[quorum]\n", f"[quorum]\nobserver = true\nraft_port = {raft_port}\n", 1)
    private_dir(work)
    (work / "node.toml").write_text(text)
    grown = replace(plan, nodes=[*plan.nodes, new])
    (Path(plan.base_dir) / CLUSTER_FILE).write_text(json.dumps(asdict(grown), indent=2) + "\n")
    return grown, new


def _retable(text: str, table: str, old: int, new: int) -> str:
    """``port = old`` → ``port = new`` inside ``[table]`` only."""
    if old < 0:
        return text
    start = text.find(f"[{table}]\n")
    if start < 0:
        return text
    end = text.find("\n[", start + 1)
    end = len(text) if end < 0 else end
    section = text[start:end].replace(f"port = {old}\n", f"port = {new}\n", 1)
    return text[:start] + section + text[end:]
