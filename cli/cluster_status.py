"""``rillet cluster status``: the quorum, brokers and partitions of any cluster, as its nodes
see them.

Each node is asked for its view (DescribeQuorum); the most up-to-date answer is shown, with
every node's own line, so a node that lags or disagrees stands out. Against a cluster of
``rillet cluster up`` the nodes come from its plan (and their processes are shown); against
any other cluster (``--bootstrap``) they are the bootstrap addresses plus every broker the
first answers list. The partition summary (under-replicated, leaderless) comes from the
cluster metadata, the same source ``topics describe`` uses.

A node that does not answer is either refused (no process listens) or busy (the connection
was accepted, so a process is there, but it did not answer in time): when no node answers at
all the two cases get different lines, because "down" and "paused or overloaded" call for
different actions. A node that answers with a refusal (the login failed, or the principal
has no ACL allowing DescribeQuorum) is up: that is said, with the node's reason, which
names the principal.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import trio

from rillet.cli.common import print_table, run_async
from rillet.client import Admin
from rillet.client.cluster import parse_bootstrap
from rillet.client.connection import BrokerConnection
from rillet.client.errors import (
    AuthenticationFailedError,
    AuthorizationFailedError,
    ClientTimeoutError,
    ClusterAuthorizationFailedError,
    ConnectionFailedError,
    RilletError,
)
from rillet.client.sasl import SaslLogin
from rillet.client.types import TopicDescription
from rillet.wire.cluster_messages import DescribeQuorumRequest, DescribeQuorumResponse

STATUS_TIMEOUT_S = 5.0
MAX_LISTED_PARTITIONS = 20  # longer lists end in "and N more"

Address = tuple[str, int]


@dataclass(frozen=True, slots=True)
class NodeProbe:
    """One node's DescribeQuorum answer, or why there is none: the connection failed
    (REFUSED: no process listens) or it was accepted but not answered in time (BUSY: a
    process that is alive but paused or overloaded; the kernel accepts for it)."""

    view: DescribeQuorumResponse | None
    failure: str | None = None


REFUSED = "unreachable (connection refused)"
BUSY = f"busy (no answer in {STATUS_TIMEOUT_S:g}s)"
NOT_AUTHORIZED = "not authorized"
_REFUSALS = (AuthenticationFailedError, AuthorizationFailedError, ClusterAuthorizationFailedError)


def no_answer_line(probes: Mapping[Any, NodeProbe], alive: Mapping[Any, int]) -> str:
    """What to say when no node answered: refused by a node (the login or its ACLs), down
    only when none could be reached at all, else busy."""
    refusals = [p.failure for p in probes.values() if (p.failure or "").startswith(NOT_AUTHORIZED)]
    if refusals:
        return f"{refusals[0]} (the cluster is up: its nodes refused this client)"
    busy = sorted(str(key) for key, p in probes.items() if p.failure == BUSY)
    if not busy:
        return "no node reachable (connections refused): the cluster is down"
    running = {str(key) for key in alive} | set(busy)
    listed = ", ".join(busy)
    return (
        f"no node answered within {STATUS_TIMEOUT_S:g}s, but node(s) {listed} accepted the "
        f"connection: {len(running)} node(s) are running but busy (paused, or overloaded); "
        "try again, or check their logs"
    )


async def probe(
    host: str,
    port: int,
    timeout_s: float = STATUS_TIMEOUT_S,
    ssl_context: ssl.SSLContext | None = None,
    state_digest: bool = False,
    sasl: SaslLogin | None = None,
) -> NodeProbe:
    """One node's DescribeQuorum answer, or REFUSED / BUSY / NOT_AUTHORIZED (with the
    node's reason); ``state_digest`` asks for the hash of its metadata state too."""
    result = NodeProbe(None, REFUSED)
    try:
        async with trio.open_nursery() as nursery:
            conn = BrokerConnection(
                host, port, client_id="rillet-cluster-status", ssl_context=ssl_context, sasl=sasl
            )
            try:
                await conn.connect(nursery, timeout_s)
            except ConnectionFailedError:
                return result
            try:
                request = DescribeQuorumRequest(include_state_digest=state_digest)
                result = NodeProbe(await conn.request(request, timeout_s))
            finally:
                conn.close()
    except* ClientTimeoutError:
        result = NodeProbe(None, BUSY)
    except* _REFUSALS as group:
        result = NodeProbe(None, f"{NOT_AUTHORIZED}: {group.exceptions[0]}")
    except* RilletError:  # the nursery wraps failures in an ExceptionGroup
        pass
    return result


async def probe_all(
    addresses: Sequence[Address],
    timeout_s: float = STATUS_TIMEOUT_S,
    ssl_context: ssl.SSLContext | None = None,
    state_digest: bool = False,
    sasl: SaslLogin | None = None,
) -> dict[Address, NodeProbe]:
    """Every address probed at once; by address."""
    probes: dict[Address, NodeProbe] = {}

    async def ask(address: Address) -> None:
        probes[address] = await probe(*address, timeout_s, ssl_context, state_digest, sasl)

    async with trio.open_nursery() as nursery:
        for address in dict.fromkeys(addresses):
            nursery.start_soon(ask, address)
    return probes


def best_view(views: Sequence[DescribeQuorumResponse]) -> DescribeQuorumResponse:
    """The most informed answer: one that knows a leader, the leader's own (it alone knows
    the others' replication), then the furthest applied."""
    return max(views, key=lambda v: (v.leader_id >= 0, v.node_id == v.leader_id, v.applied_index))


@dataclass(frozen=True, slots=True)
class PartitionHealth:
    """Partitions whose ISR is smaller than their replica set, and those without a leader,
    as ``topic-partition`` names."""

    under_replicated: list[str]
    unavailable: list[str]

    @classmethod
    def of(cls, topics: Sequence[TopicDescription]) -> PartitionHealth:
        under, unavailable = [], []
        for t in topics:
            for p in t.partitions:
                name = f"{t.name}-{p.partition}"
                if p.leader < 0:
                    unavailable.append(name)
                if len(p.isr) < len(p.replicas):
                    under.append(name)
        return cls(under, unavailable)


async def partition_health(
    bootstrap: str,
    timeout_s: float = 2 * STATUS_TIMEOUT_S,
    ssl_context: ssl.SSLContext | None = None,
    sasl: SaslLogin | None = None,
) -> tuple[str, PartitionHealth] | None:
    """(cluster id, partition health) from the metadata, or None when no node answered."""
    with trio.move_on_after(timeout_s):
        try:
            async with Admin(
                bootstrap,
                request_timeout_ms=int(timeout_s * 1000),
                ssl_context=ssl_context,
                sasl=sasl,
            ) as admin:
                cluster = await admin.describe_cluster()
                topics = await admin.describe_topics()
        except RilletError:
            return None
        return cluster.cluster_id, PartitionHealth.of(topics)
    return None


def listed(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_LISTED_PARTITIONS])
    more = len(names) - MAX_LISTED_PARTITIONS
    return shown + (f" and {more} more" if more > 0 else "")


def print_quorum(best: DescribeQuorumResponse, cluster_id: str) -> None:
    leader = best.leader_id if best.leader_id >= 0 else "none"
    print(f"cluster {cluster_id}: leader {leader}, term {best.term}, voters {best.voters}")
    print(f"metadata applied through index {best.applied_index} (as seen by node {best.node_id})")
    print_replication(best)


def print_replication(view: DescribeQuorumResponse) -> None:
    """The Raft leader's view of each voter and observer: its log end and how far behind
    the leader's it is (only the leader knows; other nodes' answers have none)."""
    if not view.voter_states:
        return
    end = max(v.log_end_offset for v in view.voter_states)
    for kind, states in (("voter", view.voter_states), ("observer", view.observer_states)):
        for v in states:
            directory = f" directory {v.directory_id[:8]}" if v.directory_id else ""
            print(
                f"  {kind} {v.voter_id}: log end {v.log_end_offset}, lag "
                f"{max(0, end - v.log_end_offset)}{directory}"
            )


def raft_view(p: NodeProbe | None) -> str:
    if p is None:
        return "-"
    v = p.view
    if v is None:
        return p.failure or "-"
    return f"leader {v.leader_id}, term {v.term}, applied {v.applied_index}"


def print_brokers_and_partitions(
    best: DescribeQuorumResponse, health: PartitionHealth | None
) -> None:
    fenced = [b.broker_id for b in best.brokers if b.fenced]
    print(f"brokers: {len(best.brokers)}, fenced: {len(fenced)}")
    for b in best.brokers:
        state = "fenced" if b.fenced else "unfenced"
        rack = f" rack {b.rack}" if b.rack else ""
        print(f"  {b.broker_id}: {b.host}:{b.port} epoch {b.broker_epoch} {state}{rack}")
    under = "unknown" if health is None else str(len(health.under_replicated))
    print(f"topics: {best.topics}, partitions: {best.partitions}, under-replicated: {under}")
    if best.leaderless_partitions:
        print(f"partitions without a leader: {listed(best.leaderless_partitions)}")
    else:
        print("every partition has a leader")
    if health is not None and health.under_replicated:
        print(f"under-replicated partitions: {listed(health.under_replicated)}")


def run_remote_status(bootstrap: str, security: Mapping[str, Any] | None = None) -> int:
    """Status of any cluster, through the nodes at ``bootstrap`` and the brokers they list;
    ``security``: the client options (``ssl_context``, ``sasl``) of the command line."""
    tls = (security or {}).get("ssl_context")
    sasl = (security or {}).get("sasl")

    async def main() -> int:
        seeds = parse_bootstrap(bootstrap)
        probes = await probe_all(seeds, ssl_context=tls, sasl=sasl)
        answered = [p.view for p in probes.values() if p.view is not None]
        if not answered:
            print(no_answer_line({f"{h}:{p}": pr for (h, p), pr in probes.items()}, {}))
            return 1
        best = best_view(answered)
        brokers = [(b.host, b.port) for b in best.brokers]
        probes.update(
            await probe_all([a for a in brokers if a not in probes], ssl_context=tls, sasl=sasl)
        )
        health = await partition_health(bootstrap, ssl_context=tls, sasl=sasl)
        print_quorum(best, health[0] if health else "?")
        by_node = {p.view.node_id: (a, p) for a, p in probes.items() if p.view is not None}
        rows: list[tuple[str, ...]] = [("NODE", "LISTENER", "RAFT VIEW")]
        for b in best.brokers:
            address, p = by_node.get(b.broker_id, ((b.host, b.port), probes.get((b.host, b.port))))
            rows.append((str(b.broker_id), f"{address[0]}:{address[1]}", raft_view(p)))
        known = {(b.host, b.port) for b in best.brokers} | {a for a, _ in by_node.values()}
        for address, p in probes.items():
            if address not in known:  # a bootstrap address that did not answer
                rows.append(("?", f"{address[0]}:{address[1]}", raft_view(p)))
        print_table(rows)
        print_brokers_and_partitions(best, health[1] if health else None)
        return 0

    return run_async(main)
