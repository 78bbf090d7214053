"""The Raft leader's view of metadata replication, as Kafka's DescribeQuorum reports it.

Raft numbers entries from 1, Kafka's log offsets from 0: a log whose last entry is index
``i`` ends at Kafka offset ``i``, so an index is already a log end offset (and the commit
index a high watermark). The engine tells how long ago each voter last answered; the wall
clock turns that into the timestamps Kafka's tools print.
"""

from __future__ import annotations

from rillet.raft.quorum import ReplicaProgress
from rillet.wire.cluster_messages import VoterState


def voter_states(
    progress: list[ReplicaProgress], now_ms: int, voters: bool = True
) -> list[VoterState]:
    """Each voter's (or observer's) log end and when it was last heard from; "caught up"
    (it has the leader's whole log) is known only for now, so a replica behind has no such
    time (-1). Replicas whose progress is not known here get -1 throughout."""
    known = [p for p in progress if p.match_index >= 0]
    leader_end = max((p.match_index for p in known if p.voter), default=0)
    out = []
    for p in progress:
        if p.voter != voters or p.match_index < 0:
            continue
        heard_ms = now_ms - p.quiet_ms
        caught_up_ms = heard_ms if p.match_index >= leader_end else -1
        out.append(VoterState(p.node_id, p.match_index, heard_ms, caught_up_ms, p.directory_id))
    return out
