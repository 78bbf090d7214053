"""Which address the leader's transport dials for each replica (raft/quorum_membership.py).

A voter that knows no leader asks the leader to observe it (ObserveRaft) with its own idea
of its Raft address. The leader must keep dialing a voter at the address it was configured
with: links may be routed (a proxy, a tunnel, another interface), and the chaos harness's
network partitions are such routes. When the leader took the voter's own address instead,
its Raft links went around the harness's proxies and a cut node stayed Raft leader.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping

from rillet.raft.core import RaftCore
from rillet.raft.core_config import Config
from rillet.raft.log_storage import MemoryStorage
from rillet.raft.quorum_membership import QuorumMembership
from rillet.raft.transport import PeerAddress

ROUTED = {
    1: PeerAddress("127.0.0.1", 9001),
    2: PeerAddress("127.0.0.1", 9102),  # node 1 reaches node 2 through this route
    3: PeerAddress("127.0.0.1", 9103),
}
DIRECT_2 = PeerAddress("127.0.0.1", 7002)  # where node 2 itself listens


class RecordingTransport:
    """Our transport's one method membership calls, remembering the peers it was given."""

    def __init__(self) -> None:
        self.peers: dict[int, PeerAddress] = {}

    def set_peers(self, peers: Mapping[int, PeerAddress], accept: Collection[int] = ()) -> None:
        self.peers = dict(peers)


def _leader_membership() -> tuple[QuorumMembership, RecordingTransport]:
    core = RaftCore(1, [1, 2, 3], MemoryStorage(), Config(), random.Random(0))
    transport = RecordingTransport()
    membership = QuorumMembership(core, transport, ROUTED, timeout_s=1.0, tick_ms=50)  # type: ignore[arg-type]
    membership.sync()
    return membership, transport


def test_a_voter_asking_to_be_observed_keeps_its_configured_route() -> None:
    membership, transport = _leader_membership()
    assert transport.peers[2] == ROUTED[2]
    membership.observe(2, DIRECT_2)
    membership.sync()
    assert transport.peers[2] == ROUTED[2]
    assert membership.addresses()[2] == ROUTED[2]


def test_a_node_that_is_not_a_voter_is_dialed_where_it_says() -> None:
    membership, transport = _leader_membership()
    observer = PeerAddress("127.0.0.1", 7004)
    membership.observe(4, observer)
    membership.sync()
    assert transport.peers[4] == observer
