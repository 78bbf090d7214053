"""A Raft leader cut off from the other voters by the harness's link proxies loses the
leadership to them, and the node-to-node Raft connections all run through the proxies.

This is the chaos harness's network partition at its smallest. It failed while a voter's
ObserveRaft request (sent by every voter that knows no leader, at start-up too) made the
leader dial that voter at the address the voter gave, its real port: the Raft links went
around the proxies, a cut leader kept leading and committing, and the rest of the cluster
never elected another.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rillet.chaos.link_proxy import LinkProxies
from rillet.chaos.probes import raft_leader, wait_until
from rillet.chaos.runner import CLUSTER_CONFIG
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = pytest.mark.integration

NODES = [1, 2, 3]
CUT_TIMEOUT_S = 15.0


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
        leader = _cut_until_replaced(links, cluster, leader)
        # Every node back under one leader before the second cut.
        assert wait_until(lambda: raft_leader(cluster, NODES) == leader, 15.0)
        _cut_until_replaced(links, cluster, leader)
