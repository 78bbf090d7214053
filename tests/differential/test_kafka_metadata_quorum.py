"""Kafka's ``kafka-metadata-quorum describe --status / --replication`` against a rillet
cluster that has an observer (a node started with ``rillet cluster add-node``), and against
the real Kafka broker: the same columns and fields, the observer shown where Kafka shows its
observers (the brokers that fetch the metadata log without a vote).

The real Kafka is the suite's one combined node, so it has no observer: its answers give
the shape (header, fields, a row per replica), rillet's the observer row. Skipped with the
reason when Kafka's jars cannot be had.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from broker_pair import Broker
from cluster_checks import raft_leader, views
from test_kafka_tools import QUORUM, run_tool

from rillet.launcher.added_node import add_node
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

OBSERVER_TIMEOUT_S = 30.0


@pytest.fixture
def grown(tmp_path: Path) -> Iterator[tuple[LocalCluster, int]]:
    """Three voters and node 4, an observer and broker, shown by the leader (its id)."""
    plan = plan_cluster(tmp_path, 3, "broker_session_timeout_ms = 3000\n")
    with LocalCluster(plan) as cluster:
        cluster.start()
        cluster.plan, node = add_node(cluster.plan)
        cluster.start([node.node_id])
        deadline = time.monotonic() + OBSERVER_TIMEOUT_S
        while (leader := _observed_by(cluster, node.node_id)) is None:
            assert time.monotonic() < deadline, "the leader never listed node 4 as an observer"
            time.sleep(0.1)
        yield cluster, leader


def _observed_by(cluster: LocalCluster, node_id: int) -> int | None:
    """The Raft leader, once it lists ``node_id`` as an observer."""
    leader = raft_leader(cluster, [1, 2, 3])
    view = None if leader is None else views(cluster, [leader]).get(leader)
    if view is None or all(o.voter_id != node_id for o in view.observer_states):
        return None
    return leader


def replication(tools: Path, bootstrap: str) -> tuple[list[str], list[dict[str, str]]]:
    """``describe --replication``: its header and its rows, column by column."""
    text = run_tool(tools, QUORUM, "--bootstrap-server", bootstrap, "describe", "--replication")
    lines = [line.split() for line in text.strip().splitlines()]
    header, rows = lines[0], lines[1:]
    assert all(len(r) == len(header) for r in rows), text
    return header, [dict(zip(header, r, strict=True)) for r in rows]


def status(tools: Path, bootstrap: str) -> dict[str, str]:
    text = run_tool(tools, QUORUM, "--bootstrap-server", bootstrap, "describe", "--status")
    return dict(re.findall(r"^(\w+):\s+(.*)$", text, re.M))


def test_describe_shows_the_observer_as_kafka_shows_observers(
    tools: Path, real_kafka: Broker, grown: tuple[LocalCluster, int]
) -> None:
    # Bootstrapped at the Raft leader (the admin client may still ask another node).
    cluster, leader = grown
    bootstrap = cluster.plan.node(leader).kafka_bootstrap
    kafka_header, kafka_rows = replication(tools, real_kafka.bootstrap)
    header, rows = replication(tools, bootstrap)
    assert header == kafka_header
    assert {r["Status"] for r in kafka_rows} <= {"Leader", "Follower", "Observer"}
    by_id = {int(r["NodeId"]): r for r in rows}
    assert sorted(by_id) == [1, 2, 3, 4]
    assert by_id[4]["Status"] == "Observer"
    assert sorted(r["Status"] for i, r in by_id.items() if i != 4) == [
        "Follower",
        "Follower",
        "Leader",
    ]
    assert by_id[leader]["Status"] == "Leader"
    # Kafka's admin client sends the request to a node of its choosing (the least loaded,
    # from a random start), not to the bootstrap node. The Raft leader knows every log end;
    # another rillet node answers them unknown (-1) where Kafka would forward to the active
    # controller (docs/kafka-compatibility.md): one form or the other, never a mix.
    ends = {int(r["LogEndOffset"]) for r in rows}
    assert all(e > 0 for e in ends) or ends == {-1}, rows
    assert all(int(r["Lag"]) >= 0 for r in rows), rows

    kafka_fields, fields = status(tools, real_kafka.bootstrap), status(tools, bootstrap)
    assert sorted(fields) == sorted(kafka_fields)
    observers = json.loads(fields["CurrentObservers"])
    assert [o["id"] for o in observers] == [4], fields["CurrentObservers"]
