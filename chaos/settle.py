"""After the last fault is healed: wait for recovery, then gather the final state.

Each wait has its own deadline and, when it runs out, leaves a note instead of raising, so a
run that does not recover still reaches the checker (``recovered`` false is a violation;
the notes say what was missing). Order matters: the members keep consuming until the group
has caught up with the log's end, then leave; only then does the metadata stop moving (they
commit offsets through it) and can the nodes be compared.
"""

from __future__ import annotations

import logging
from typing import Any

from rillet.chaos import probes
from rillet.chaos.disk import replica_copy
from rillet.chaos.final_state import FinalState, ReplicaCopy
from rillet.chaos.history import HistoryWriter
from rillet.chaos.members import GroupSampler, MemberProcesses
from rillet.chaos.nemesis import Nemesis
from rillet.chaos.replace_voter import leader_voters
from rillet.chaos.workload import final_read
from rillet.client import BlockingAdmin, BlockingConsumer, TopicPartition
from rillet.client.errors import RilletError
from rillet.launcher.local_cluster import LocalCluster

log = logging.getLogger(__name__)
CATCH_UP_TIMEOUT_S = 30.0
AGREEMENT_TIMEOUT_S = 30.0
READ_TIMEOUT_S = 60.0
REPLICA_TIMEOUT_S = 30.0


def collect_final_state(
    cluster: LocalCluster,
    nemesis: Nemesis,
    members: MemberProcesses,
    sampler: GroupSampler,
    history: HistoryWriter,
    *,
    topic: str,
    group: str,
    partitions: int,
    timeout_s: float,
) -> FinalState:
    final = FinalState(topic, partitions)
    ids = [n.node_id for n in cluster.plan.nodes]
    nemesis.check_crashes()
    final.recovered = _recover(cluster, ids, topic, final, timeout_s)
    history.write({"type": "phase", "phase": "recovered", "ok": final.recovered})
    if (
        probes.wait_until(
            lambda: _caught_up(cluster.bootstrap, topic, group, partitions), CATCH_UP_TIMEOUT_S
        )
        is None
    ):
        final.notes.append(f"the group did not catch up within {CATCH_UP_TIMEOUT_S:g}s")
    sampler.stop()
    exited = members.exited()
    if exited:
        final.notes.append(f"members exited on their own: {exited}")
    members.close()
    history.write({"type": "phase", "phase": "members-stopped"})
    agreed = probes.wait_until(lambda: probes.metadata_agreed(cluster, ids), AGREEMENT_TIMEOUT_S)
    if agreed is None:
        final.recovered = False
        final.notes.append(f"the nodes' metadata did not agree within {AGREEMENT_TIMEOUT_S:g}s")
    else:
        final.voters = leader_voters(cluster, agreed.leader_id)
    read = final_read(cluster.bootstrap, topic, partitions, READ_TIMEOUT_S)
    final.records, final.end_offsets, final.read_upto = (
        read.records,
        read.end_offsets,
        read.read_upto,
    )
    if read.error:
        final.notes.append(read.error)
    final.replicas = _replicas(cluster, topic, final.end_offsets)
    final.received = members.received()
    final.committed = _committed(cluster.bootstrap, topic, group)
    final.topics = _topics(cluster.bootstrap)
    history.write({"type": "phase", "phase": "collected"})
    return final


def _recover(
    cluster: LocalCluster, ids: list[int], topic: str, final: FinalState, timeout_s: float
) -> bool:
    """Every node up, registered and unfenced; every partition led with a full ISR."""
    missing: dict[str, Any] = {}

    def healthy() -> bool:
        missing.clear()
        down = [i for i in ids if not cluster.alive(i)]
        if down:
            missing["down"] = down
        elif not probes.brokers_unfenced(cluster, ids):
            missing["brokers"] = "not all registered and unfenced"
        elif not probes.topic_healthy(cluster.bootstrap, topic):
            missing["topic"] = "a partition without a leader or a full ISR"
        return not missing

    ok = probes.wait_until(healthy, timeout_s, poll_s=0.25) is not None
    if not ok:
        final.notes.append(f"not recovered within {timeout_s:g}s: {missing}")
    return ok


def _caught_up(bootstrap: str, topic: str, group: str, partitions: int) -> bool:
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    try:
        with BlockingConsumer(bootstrap, request_timeout_ms=probes.PROBE_TIMEOUT_MS) as c:
            ends = c.end_offsets(tps)
        with BlockingAdmin(bootstrap, request_timeout_ms=probes.PROBE_TIMEOUT_MS) as admin:
            committed = admin.group_offsets(group)
    except RilletError:
        return False
    return all(committed.get(tp, -1) >= end for tp, end in ends.items())


def _committed(bootstrap: str, topic: str, group: str) -> dict[int, int]:
    try:
        with BlockingAdmin(bootstrap, request_timeout_ms=probes.PROBE_TIMEOUT_MS) as admin:
            offsets = admin.group_offsets(group)
    except RilletError as exc:
        log.warning("final committed offsets: %r", exc)
        return {}
    return {tp.partition: o for tp, o in offsets.items() if tp.topic == topic and o >= 0}


def _topics(bootstrap: str) -> list[str] | None:
    try:
        with BlockingAdmin(bootstrap, request_timeout_ms=probes.PROBE_TIMEOUT_MS) as admin:
            return admin.list_topics()
    except RilletError as exc:
        log.warning("final topic list: %r", exc)
        return None


def _replicas(
    cluster: LocalCluster, topic: str, end_offsets: dict[int, int]
) -> dict[int, list[ReplicaCopy]]:
    """Each partition's copies on its replicas, once they agree (or at the deadline)."""
    described = probes.describe_topic(cluster.bootstrap, topic)
    if described is None:
        return {}
    where = {p.partition: sorted(p.replicas) for p in described.partitions}
    snapshot: dict[int, list[ReplicaCopy]] = {}

    def converged() -> bool:
        snapshot.clear()
        for p, nodes in sorted(where.items()):
            hw = end_offsets.get(p, 0)
            snapshot[p] = [
                replica_copy(cluster.plan.node(n).work_dir, n, topic, p, hw) for n in nodes
            ]
        return all(
            len({(c.prefix_bytes, c.prefix_sha256) for c in copies}) == 1
            and all(c.error is None and c.log_end_offset >= end_offsets.get(p, 0) for c in copies)
            for p, copies in snapshot.items()
        )

    probes.wait_until(converged, REPLICA_TIMEOUT_S, poll_s=0.5)
    return dict(snapshot)
