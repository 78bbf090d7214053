"""A node that is both controller and partition leader is killed: its partitions move at
once, not after the new controller's grace.

Issue 21: a new controller gave every broker ``new_controller_grace_ms`` (3 s) to send its
first heartbeat, so the partitions led by a broker that died with the old controller stayed
leaderless that long. The new controller now probes the listeners of the brokers it has not
heard from, and a refused connection (no process there) ends that broker's lease at once.
The grace (at most the session timeout) is 30 s here: waiting it out fails the test's 15 s
deadline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_checks import agreed_state, raft_leader, wait_for

from rillet.client import BlockingAdmin, NewTopic
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = pytest.mark.integration

CONFIG = "broker_session_timeout_ms = 30000\nnew_controller_grace_ms = 30000\n"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(plan_cluster(tmp_path, 3, CONFIG)) as c:
        c.start()
        yield c


def leaders(bootstrap: str, topic: str) -> dict[int, int]:
    with BlockingAdmin(bootstrap, request_timeout_ms=3_000) as admin:
        return {p.partition: p.leader for p in admin.describe_topics([topic])[0].partitions}


def test_partitions_of_a_killed_controller_move_before_the_grace(cluster: LocalCluster) -> None:
    topic = "moves"
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 3, replication_factor=3)])
    wait_for("agreement", lambda: agreed_state(cluster, [1, 2, 3]))
    controller = wait_for("a controller", lambda: raft_leader(cluster))
    wait_for(
        "the controller leads a partition",
        lambda: controller in leaders(cluster.bootstrap, topic).values(),
        timeout_s=30,
    )
    cluster.kill(controller)
    killed_at = time.monotonic()
    moved = wait_for(
        "every partition led by a live node",
        lambda: (
            (ls := leaders(cluster.bootstrap, topic))
            and all(n > 0 and n != controller for n in ls.values())
            and ls
        ),
        timeout_s=15,
    )
    assert controller not in moved.values()
    print(f"partitions moved {time.monotonic() - killed_at:.2f} s after the kill")
