"""Kafka's ``kafka-metadata-quorum describe --status / --replication`` against a rillet
cluster that has an observer (a node started with ``rillet cluster add-node``), and against
the real Kafka broker: the same columns and fields, the observer shown where Kafka shows its
observers (the brokers that fetch the metadata log without a vote). Every node answers with
the Raft leader's view (a Kafka broker forwards DescribeQuorum to the active controller):
each is asked directly too, since the tool's admin client picks the node it asks.

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
from typing import Any

import pytest
from broker_pair import Broker
from cluster_checks import raft_leader, views
from kafka_quorum_request import describe_quorum_request
from test_against_kafka import RawKafka
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
    # from a random start), not to the bootstrap node: whichever it is, the answer is the
    # Raft leader's, every log end known.
    assert all(int(r["LogEndOffset"]) > 0 for r in rows), rows
    assert all(int(r["Lag"]) >= 0 for r in rows), rows

    kafka_fields, fields = status(tools, real_kafka.bootstrap), status(tools, bootstrap)
    assert sorted(fields) == sorted(kafka_fields)
    observers = json.loads(fields["CurrentObservers"])
    assert [o["id"] for o in observers] == [4], fields["CurrentObservers"]
    every_node_answers_the_leader_s_view(real_kafka, cluster, leader)


def describe_quorum(bootstrap: str) -> tuple[int, Any]:
    """DescribeQuorum v2 asked of exactly this node: the top-level error and the partition."""
    from kafka.protocol.admin import DescribeQuorumResponse

    request = describe_quorum_request()
    with RawKafka(bootstrap) as conn:
        answer = conn.call(request, 2, DescribeQuorumResponse)
    [topic] = answer.topics
    [partition] = topic.partitions
    return answer.error_code, partition


def every_node_answers_the_leader_s_view(
    real_kafka: Broker, cluster: LocalCluster, leader: int
) -> None:
    """Each node asked directly, as Kafka's broker is: the Raft leader's view from all."""
    kafka_error, kafka = describe_quorum(real_kafka.bootstrap)
    assert (kafka_error, kafka.error_code) == (0, 0)
    assert kafka.high_watermark > 0 and all(v.log_end_offset > 0 for v in kafka.current_voters)
    for node in cluster.plan.nodes:  # voters 1-3 (the leader among them) and observer 4
        error, p = describe_quorum(node.kafka_bootstrap)
        assert (error, p.error_code, p.leader_id) == (0, 0, leader), node.node_id
        assert p.high_watermark > 0, node.node_id
        assert all(v.log_end_offset > 0 for v in p.current_voters), (node.node_id, p)
        assert [o.replica_id for o in p.observers] == [4], (node.node_id, p)
        assert all(o.log_end_offset > 0 for o in p.observers), (node.node_id, p)
