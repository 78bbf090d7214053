"""A Raft leader cut off from the other voters by the harness's link proxies loses the
leadership to them, and the node-to-node Raft connections all run through the proxies.

This is the chaos harness's network partition at its smallest. It failed while a voter's
ObserveRaft request (sent by every voter that knows no leader, at start-up too) made the
leader dial that voter at the address the voter gave, its real port: the Raft links went
around the proxies, a cut leader kept leading and committing, and the rest of the cluster
never elected another. Whether the cut then kept the old leader depended on timing, so the
test also checks the links themselves: no node process may be connected to another node's
real Raft port (found from /proc), which fails at once without the fix.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rillet.chaos.link_proxy import LinkProxies
from rillet.chaos.probes import quorum_views, raft_leader, wait_until
from rillet.chaos.runner import CLUSTER_CONFIG
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = pytest.mark.integration

NODES = [1, 2, 3]
CUT_TIMEOUT_S = 15.0
# How long the Raft links are watched for one that goes around the proxies (a voter asks to
# be observed every 2 s while it knows no leader).
OBSERVE_WINDOW_S = 3.0


TCP_ESTABLISHED = "01"


def _remote_ports_of(pid: int) -> set[int]:
    """Remote ports of ``pid``'s established TCP connections on 127.0.0.1 (its socket
    inodes in /proc/PID/fd matched in the kernel's IPv4 table)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue  # closed meanwhile
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    ports = set()
    for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == TCP_ESTABLISHED and fields[9] in inodes:
            ports.add(int(fields[2].split(":")[1], 16))
    return ports


def _direct_raft_links(cluster: LocalCluster) -> dict[int, set[int]]:
    """Per node, the other nodes whose real Raft port it is connected to (around the
    proxies, which alone should dial those ports)."""
    raft_ports = {cluster.plan.node(n).raft_port: n for n in NODES}
    out: dict[int, set[int]] = {}
    for n in NODES:
        direct = {raft_ports[p] for p in _remote_ports_of(cluster.pid(n)) if p in raft_ports}
        direct.discard(n)
        if direct:
            out[n] = direct
    return out


def _all_know(cluster: LocalCluster, leader: int) -> bool:
    views = quorum_views(cluster, NODES)
    return len(views) == len(NODES) and all(v.leader_id == leader for v in views.values())


def _cut_until_replaced(links: LinkProxies, cluster: LocalCluster, leader: int) -> int:
    """Cut ``leader`` off both ways; the Raft leader the others elect meanwhile."""
    others = [n for n in NODES if n != leader]
    links.cut({(leader, o) for o in others} | {(o, leader) for o in others})
    new_leader = wait_until(
        lambda: next(
            (n for n in [raft_leader(cluster, others)] if n is not None and n != leader), None
        ),
        CUT_TIMEOUT_S,
    )
    assert new_leader in others, (
        f"node {leader}, cut off from {others}, is still the Raft leader they know"
    )
    links.heal()
    return new_leader


def test_a_cut_raft_leader_is_replaced_by_the_other_voters(tmp_path: Path) -> None:
    """Twice: the voters that knew no leader during the first election asked the new leader
    to observe them, which is when the leader used to learn their real ports."""
    links = LinkProxies()
    plan = plan_cluster(
        tmp_path / "cluster", 3, CLUSTER_CONFIG.format(engine="raft"), route=links.route
    )
    with links, LocalCluster(plan) as cluster:
        cluster.start()
        leader = wait_until(lambda: raft_leader(cluster, NODES), 30.0)
        assert leader is not None, "no Raft leader after start-up"
        # Every voter asked to be observed while it knew no leader; those asks reach the
        # leader once it is elected, which is when it used to dial their real ports.
        assert wait_until(lambda: _all_know(cluster, leader), 15.0)
        assert wait_until(lambda: _direct_raft_links(cluster), OBSERVE_WINDOW_S) is None
        leader = _cut_until_replaced(links, cluster, leader)
        # Every node back under one leader before the second cut.
        assert wait_until(lambda: _all_know(cluster, leader), 15.0)
        assert wait_until(lambda: _direct_raft_links(cluster), OBSERVE_WINDOW_S) is None
        _cut_until_replaced(links, cluster, leader)
