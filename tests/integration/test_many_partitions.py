"""A topic of thousands of partitions on a real 3-node cluster: created, led, written to and
deleted while every node keeps answering its status and the Raft leader stays put.

Before the fix, creating such a topic held each node's event loop for seconds (every new
log fsynced several files on it, every applied entry re-reconciled every partition, one
Raft entry carried the whole topic): status requests went unanswered, Raft heartbeats were
late and a voter could start an election. Deadlines here are generous (a loaded CI machine),
and the measured worst status answer is printed (``pytest -s``) rather than asserted tightly.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_checks import views, wait_for

from rillet.client import BlockingAdmin, BlockingProducer, NewTopic
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = pytest.mark.integration

PARTITIONS = 1_000
STATUS_EVERY_S = 0.3


class StatusWatch:
    """Asks every node for its status in a loop (cluster status), noting who answered,
    how long the slowest took and every Raft (leader, term) seen."""

    def __init__(self, cluster: LocalCluster) -> None:
        self._cluster = cluster
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.rounds = 0
        self.unanswered = 0
        self.slowest_s = 0.0
        self.leaders: set[tuple[int, int]] = set()

    def __enter__(self) -> StatusWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        ids = {n.node_id for n in self._cluster.plan.nodes}
        while not self._stop.is_set():
            start = time.monotonic()
            answers = views(self._cluster)  # each node within the CLI's status timeout
            self.slowest_s = max(self.slowest_s, time.monotonic() - start)
            self.rounds += 1
            self.unanswered += len(ids - set(answers))
            self.leaders |= {(v.leader_id, v.term) for v in answers.values() if v.leader_id >= 0}
            self._stop.wait(STATUS_EVERY_S)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(plan_cluster(tmp_path, 3)) as c:  # the defaults users run
        c.start()
        yield c


def test_thousands_of_partitions_leave_status_answered_and_the_raft_leader_in_place(
    cluster: LocalCluster,
) -> None:
    with (
        StatusWatch(cluster) as watch,
        BlockingAdmin(cluster.bootstrap, request_timeout_ms=60_000) as admin,
    ):
        start = time.monotonic()
        admin.create_topics([NewTopic("many", PARTITIONS, 3)], timeout_ms=60_000)
        with BlockingProducer(cluster.bootstrap, acks="all", linger_ms=20) as producer:
            futures = [producer.send("many", b"x", partition=p) for p in range(PARTITIONS)]
            producer.flush()
            offsets = {f.result(timeout=120).offset for f in futures}
        led_s = time.monotonic() - start
        assert offsets == {0}
        admin.delete_topics(["many"], timeout_ms=60_000)
        wait_for(
            "every node to drop the partitions",
            lambda: all(v.partitions == 0 for v in views(cluster).values()),
            timeout_s=60,
        )
        time.sleep(2 * STATUS_EVERY_S)  # a status round after the deletion
    print(
        f"{PARTITIONS} partitions: led in {led_s:.1f}s; {watch.rounds} status rounds, "
        f"slowest {watch.slowest_s:.2f}s, leaders {sorted(watch.leaders)}"
    )
    assert watch.rounds > 0 and watch.unanswered == 0
    assert len(watch.leaders) == 1, f"the Raft leader changed: {sorted(watch.leaders)}"
