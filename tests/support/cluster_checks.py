"""Probes of a real local cluster shared by the integration tests: each asks the nodes (over
the wire, like an operator) and polls with a deadline, never a fixed sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from rillet.cli.cluster_command import describe_nodes
from rillet.client import BlockingConsumer, BlockingProducer, TopicPartition
from rillet.launcher.local_cluster import LocalCluster
from rillet.wire.cluster_messages import DescribeQuorumResponse

T = TypeVar("T")


# Raft election timeouts for test clusters that already use short sessions: the default
# (1-2 s, as in KRaft) adds over a second to every cluster start and Raft failover.
FAST_ELECTIONS = "election_timeout_min_ms = 300\nelection_timeout_max_ms = 600\n"


def views(
    cluster: LocalCluster, ids: list[int] | None = None, state_digest: bool = False
) -> dict[int, DescribeQuorumResponse]:
    nodes = [n for n in cluster.plan.nodes if ids is None or n.node_id in ids]
    answers = describe_nodes([(n.node_id, n.port) for n in nodes], state_digest)
    return {nid: v for nid, v in answers.items() if v is not None}


def wait_for(what: str, probe: Callable[[], T | None], timeout_s: float = 20.0) -> T:
    deadline = time.monotonic() + timeout_s
    while True:
        value = probe()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(0.02)


def raft_leader(cluster: LocalCluster, ids: list[int] | None = None) -> int | None:
    leaders = {v.leader_id for v in views(cluster, ids).values()}
    if len(leaders) == 1 and (leader := leaders.pop()) >= 0:
        return leader
    return None


def agreed_state(cluster: LocalCluster, ids: list[int]) -> DescribeQuorumResponse | None:
    """The common view once every listed node has applied the same state (same digest)."""
    vs = views(cluster, ids, state_digest=True)
    if set(vs) != set(ids):
        return None
    digests = {(v.applied_index, v.state_sha256) for v in vs.values()}
    return next(iter(vs.values())) if len(digests) == 1 else None


def produce_all(bootstrap: str, topic: str, values: list[bytes]) -> dict[bytes, tuple[int, int]]:
    acked = {}
    with BlockingProducer(bootstrap, acks=-1) as producer:
        futures = [(v, producer.send(topic, v, key=v)) for v in values]
        for v, f in futures:
            md = f.result(timeout=30)
            acked[v] = (md.partition, md.offset)
    return acked


def read_all(bootstrap: str, topic: str, partitions: int, expected: int) -> list[Any]:
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    records: list[Any] = []
    with BlockingConsumer(bootstrap) as consumer:
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        deadline = time.monotonic() + 30
        while len(records) < expected and time.monotonic() < deadline:
            records += consumer.poll(timeout_ms=200)
    return records
