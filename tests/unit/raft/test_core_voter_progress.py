"""What a leader tells of each voter's replication (Kafka's DescribeQuorum shows it): how
far its log matches and how many ticks it has been quiet; nothing on a follower."""

from __future__ import annotations

from raft_simulation.lockstep import LockstepCluster

from rillet.raft.core_config import Config

# The leader counts a voter's quiet ticks where it checks it still has a quorum.
CHECKED = Config(pre_vote=False, check_quorum=True)


def test_a_leader_knows_each_voters_match_and_quiet_ticks() -> None:
    cluster = LockstepCluster([1, 2, 3], CHECKED)
    cluster.elect(1)
    cluster.core(1).propose(b"x")
    cluster.deliver()
    end = cluster.core(1).raft_log.last_index()
    assert cluster.core(1).voter_progress() == {1: (end, 0), 2: (end, 0), 3: (end, 0)}
    assert cluster.core(2).voter_progress() == {}
    cluster.partition([1, 2], [3])
    cluster.core(1).propose(b"y")
    cluster.deliver()
    for _ in range(3):
        cluster.core(1).tick()
    cluster.deliver()
    progress = cluster.core(1).voter_progress()
    assert progress[1] == (end + 1, 0)
    assert progress[2][0] == end + 1
    assert progress[3][0] == end and progress[3][1] > 0  # behind, and not heard from
