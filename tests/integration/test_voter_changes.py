"""Raft voter changes on real node processes under acks=all traffic, with the CLI:
``rillet cluster add-voter / remove-voter`` against the cluster's bootstrap address.

* Two nodes planned as ``rillet cluster add-node`` plans them (Raft observers) join as the
  fourth and fifth voters, then voters 1 and 2 are removed (one of them leads at some point:
  removing the leader hands leadership over); metadata changes still commit and the removed
  nodes keep the metadata log as observers.
* A voter's machine dies with its disk: it is removed, comes back with an empty data
  directory (a new directory id) and is added again; the configuration names the new id.

Afterwards every acknowledged record is in the partition exactly once. These are the steps
of docs/operations-membership.md.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from acked_traffic import AckedTraffic, assert_acked_exactly_once
from cluster_checks import FAST_ELECTIONS, raft_leader, views, wait_for

from rillet.client import BlockingAdmin, NewTopic
from rillet.launcher.added_node import add_node
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

# Both tests together took about 40 s on a quiet 2-core machine (2 to 3 min at a load of
# 20), more than the default run has room for: opt-in (docs/operations-membership.md).
pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("RILLET_VOTER_TESTS") != "1",
        reason="slow: run with RILLET_VOTER_TESTS=1",
    ),
]

CONFIG = FAST_ELECTIONS + "broker_session_timeout_ms = 3000\nbroker_heartbeat_interval_ms = 200\n"
TOPIC = "voters"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(plan_cluster(tmp_path, 3, CONFIG)) as c:
        c.start()
        with BlockingAdmin(c.bootstrap) as admin:
            admin.create_topics([NewTopic(TOPIC, 1, replication_factor=3)])
        yield c


def rillet(cluster: LocalCluster, command: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "rillet.cli.main", *shlex.split(command)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def bootstrap_of(cluster: LocalCluster, ids: list[int]) -> str:
    return ",".join(cluster.plan.node(i).bootstrap for i in ids)


def add_voter(cluster: LocalCluster, node_id: int, via: list[int]) -> None:
    n = cluster.plan.node(node_id)
    rillet(
        cluster,
        f"cluster add-voter {node_id} --bootstrap {bootstrap_of(cluster, via)} "
        f"--raft {n.host}:{n.raft_port} --listener {n.bootstrap}",
    )


def voters_of(cluster: LocalCluster, ids: list[int]) -> list[int] | None:
    leader = raft_leader(cluster, ids)
    if leader is None:
        return None
    view = views(cluster, [leader]).get(leader)
    return None if view is None else view.voters


def test_add_a_fourth_and_fifth_voter_and_remove_two(cluster: LocalCluster) -> None:
    for _ in (4, 5):
        cluster.plan, node = add_node(cluster.plan)
        cluster.start([node.node_id])  # an observer and a broker
    all_ids = [1, 2, 3, 4, 5]
    with AckedTraffic(cluster.bootstrap, TOPIC, "grow-") as traffic:
        traffic.more(100, "traffic")
        add_voter(cluster, 4, [1, 2, 3])
        add_voter(cluster, 5, [1, 2, 3])
        assert voters_of(cluster, all_ids) == [1, 2, 3, 4, 5]
        traffic.more(100, "writes with five voters")
        for gone in (1, 2):
            rillet(cluster, f"cluster remove-voter {gone} --bootstrap {cluster.bootstrap}")
        wait_for("voters [3, 4, 5]", lambda: voters_of(cluster, all_ids) == [3, 4, 5])
        traffic.more(100, "writes with voters 3, 4, 5")
    with BlockingAdmin(bootstrap_of(cluster, [3, 4, 5])) as admin:  # metadata still commits
        admin.create_topics([NewTopic("after", 1, replication_factor=1)])
    # The removed voters learn of the last leader only once it replicates to them again
    # (they ask it to, within a few seconds): a leader all five name is waited for.
    leader = wait_for("a raft leader all nodes name", lambda: raft_leader(cluster, all_ids))
    assert leader in (3, 4, 5)
    wait_for(  # the removed voters follow the log as observers
        "removed voters caught up",
        lambda: all(
            v is not None and v.applied_index >= views(cluster, [leader])[leader].applied_index
            for v in views(cluster, [1, 2]).values()
        ),
    )
    assert_acked_exactly_once(cluster.bootstrap, TOPIC, traffic.acked)


def test_replace_a_dead_voter_whose_data_directory_was_deleted(cluster: LocalCluster) -> None:
    ids = [1, 2, 3]
    with AckedTraffic(cluster.bootstrap, TOPIC, "replace-") as traffic:
        traffic.more(100, "traffic")
        leader = wait_for("a raft leader", lambda: raft_leader(cluster, ids))
        dead = max(i for i in ids if i != leader)
        data = Path(cluster.plan.node(dead).work_dir) / "data"
        old_directory = (data / "__raft" / "raft" / "directory-id").read_text().strip()
        cluster.kill(dead)
        shutil.rmtree(data)  # the machine is gone with its disk
        live = [i for i in ids if i != dead]
        rillet(cluster, f"cluster remove-voter {dead} --bootstrap {bootstrap_of(cluster, live)}")
        traffic.more(100, "writes with two voters")
        cluster.start([dead])  # a new machine, same id and addresses, an empty directory
        add_voter(cluster, dead, live)
        traffic.more(100, "writes after the replacement")
    new_directory = (data / "__raft" / "raft" / "directory-id").read_text().strip()
    assert new_directory != old_directory
    leader = wait_for("a raft leader", lambda: raft_leader(cluster, ids))
    view = views(cluster, [leader])[leader]
    assert view is not None and view.voters == [1, 2, 3]
    by_id = {v.voter_id: v.directory_id for v in view.voter_states}
    assert by_id[dead] == new_directory  # the old identity is no voter any more
    assert_acked_exactly_once(cluster.bootstrap, TOPIC, traffic.acked)
