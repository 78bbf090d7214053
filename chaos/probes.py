"""Questions the harness asks a running cluster, over the wire like an operator would.

Every probe is bounded (short request timeouts) and never raises for a node that is down or
slow: it answers None and the caller polls again before its own deadline. Probes only talk
to nodes the caller says are up, so a paused node (which accepts connections but never
answers) costs nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import trio

from rillet.client import BlockingAdmin, TopicDescription
from rillet.client.connection import BrokerConnection
from rillet.client.errors import RilletError
from rillet.launcher.local_cluster import LocalCluster
from rillet.wire.cluster_messages import DescribeQuorumRequest, DescribeQuorumResponse

T = TypeVar("T")
PROBE_TIMEOUT_MS = 3_000
POLL_S = 0.1


def bootstrap_of(cluster: LocalCluster, node_ids: list[int]) -> str:
    return ",".join(cluster.plan.node(i).bootstrap for i in sorted(node_ids))


def wait_until(probe: Callable[[], T | None], timeout_s: float, poll_s: float = POLL_S) -> T | None:
    """Poll until the probe answers something truthy; None once ``timeout_s`` has passed."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(poll_s)


def describe_quorum(
    targets: list[tuple[int, str, int]],
    timeout_s: float = PROBE_TIMEOUT_MS / 1000,
    state_digest: bool = False,
) -> dict[int, DescribeQuorumResponse]:
    """Each answering node's DescribeQuorum view by node id; targets are (id, host, port).
    Nodes that refuse, time out or fail are left out."""
    views: dict[int, DescribeQuorumResponse] = {}

    async def ask(node_id: int, host: str, port: int) -> None:
        try:
            async with trio.open_nursery() as nursery:
                conn = BrokerConnection(host, port, client_id="rillet-chaos-probe")
                await conn.connect(nursery, timeout_s)
                try:
                    request = DescribeQuorumRequest(include_state_digest=state_digest)
                    views[node_id] = await conn.request(request, timeout_s)
                finally:
                    conn.close()
        except* RilletError:  # the nursery wraps a failed connect in an ExceptionGroup
            pass

    async def main() -> None:
        with trio.move_on_after(2 * timeout_s):
            async with trio.open_nursery() as nursery:
                for node_id, host, port in targets:
                    nursery.start_soon(ask, node_id, host, port)

    trio.run(main)
    return views


def quorum_views(
    cluster: LocalCluster, node_ids: list[int], state_digest: bool = False
) -> dict[int, DescribeQuorumResponse]:
    targets = []
    for i in sorted(node_ids):
        host, _, port = cluster.plan.node(i).bootstrap.rpartition(":")
        targets.append((i, host, int(port)))
    return describe_quorum(targets, state_digest=state_digest) if targets else {}


def raft_leader(cluster: LocalCluster, node_ids: list[int]) -> int | None:
    """The leader known in the highest term any of these nodes reports, if it is one of
    them (a leader outside the list is down or paused: not a target)."""
    views = [v for v in quorum_views(cluster, node_ids).values() if v.leader_id >= 0]
    if not views:
        return None
    best = max(views, key=lambda v: v.term)
    return best.leader_id if best.leader_id in node_ids else None


def metadata_agreed(cluster: LocalCluster, node_ids: list[int]) -> DescribeQuorumResponse | None:
    """The common view once every listed node answers with the same applied state."""
    views = quorum_views(cluster, node_ids, state_digest=True)
    if set(views) != set(node_ids):
        return None
    states = {(v.applied_index, v.state_sha256) for v in views.values()}
    leaders = {v.leader_id for v in views.values()}
    if len(states) != 1 or len(leaders) != 1 or -1 in leaders:
        return None
    return next(iter(views.values()))


def describe_topic(bootstrap: str, topic: str) -> TopicDescription | None:
    try:
        with BlockingAdmin(bootstrap, request_timeout_ms=PROBE_TIMEOUT_MS) as admin:
            found = admin.describe_topics([topic])
    except RilletError:
        return None
    return found[0] if found else None


def partition_leader(bootstrap: str, topic: str, partition: int) -> int | None:
    described = describe_topic(bootstrap, topic)
    if described is None:
        return None
    for p in described.partitions:
        if p.partition == partition and p.leader >= 0:
            return p.leader
    return None


def partition_isrs(bootstrap: str, topic: str) -> dict[int, list[int]] | None:
    """Each partition's in-sync replicas as the metadata says now (None: no answer)."""
    described = describe_topic(bootstrap, topic)
    if described is None:
        return None
    return {p.partition: sorted(p.isr) for p in described.partitions}


def topic_healthy(bootstrap: str, topic: str) -> bool:
    """Every partition has a leader and its whole replica set in sync."""
    described = describe_topic(bootstrap, topic)
    return described is not None and all(
        p.leader >= 0 and sorted(p.isr) == sorted(p.replicas) for p in described.partitions
    )


def brokers_unfenced(cluster: LocalCluster, node_ids: list[int]) -> bool:
    """Every listed node is registered and unfenced in the view of the Raft leader."""
    views = quorum_views(cluster, node_ids)
    leader = {v.leader_id for v in views.values()}
    if len(leader) != 1:
        return False
    view = views.get(leader.pop())
    if view is None:
        return False
    fenced = {b.broker_id for b in view.brokers if b.fenced}
    known = {b.broker_id for b in view.brokers}
    return set(node_ids) <= known and not (fenced & set(node_ids))
