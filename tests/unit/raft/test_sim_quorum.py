"""SimQuorum behaves like a Raft log seen from above: ordered commits, leader errors with
hints, ambiguous outcomes on leader change, snapshots, all reproducible by seed."""

from __future__ import annotations

import random

import pytest
import trio
import trio.testing
from sim_quorum import SimCluster

from rillet.raft.errors import NotLeaderError, ProposalOutcomeUnknown, SnapshotRequired
from rillet.raft.quorum import Leadership, Snapshot


async def test_commits_are_ordered_and_visible_to_every_member() -> None:
    cluster = SimCluster([1, 2, 3], random.Random(0))
    leader = cluster.member(1)
    assert leader.is_leader() and leader.leadership() == Leadership(1, 1)
    indexes = [await leader.propose(f"r{i}".encode()) for i in range(5)]
    assert indexes == [1, 2, 3, 4, 5]
    for member in cluster.members.values():
        entries = await member.read_committed(0)
        assert [e.data for e in entries] == [f"r{i}".encode() for i in range(5)]
        assert [e.index for e in entries] == indexes
        assert member.commit_index() == 5


async def test_followers_refuse_with_a_leader_hint() -> None:
    cluster = SimCluster([1, 2, 3], random.Random(0))
    with pytest.raises(NotLeaderError) as info:
        await cluster.member(2).propose(b"x")
    assert info.value.leader_id == 1 and info.value.term == 1


async def test_reader_waits_for_the_next_commit(autojump_clock: trio.testing.MockClock) -> None:
    cluster = SimCluster([1, 2, 3], random.Random(0))
    got = []

    async def reader() -> None:
        got.extend(await cluster.member(3).read_committed(0))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        await trio.sleep(1)
        assert got == []
        await cluster.member(1).propose(b"late")
    assert [e.data for e in got] == [b"late"]


def run_leader_change(seed: int) -> tuple[list[bytes], int, int]:
    """Propose 20 records with a commit delay, change leader mid-way; return the outcome."""
    cluster = SimCluster([1, 2, 3], random.Random(seed), commit_delay_s=1.0)
    unknown = 0

    async def main() -> None:
        nonlocal unknown

        async def propose(i: int) -> None:
            nonlocal unknown
            try:
                await cluster.member(1).propose(f"p{i}".encode())
            except ProposalOutcomeUnknown:
                unknown += 1

        async with trio.open_nursery() as nursery:
            for i in range(20):
                nursery.start_soon(propose, i)
                await trio.sleep(0.01)  # trio shuffles simultaneous tasks: stagger them
            assert cluster.elect(2) == 2

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return [e.data for e in cluster.log], unknown, cluster.lost_proposals


def test_leader_change_makes_pending_outcomes_unknown_and_is_replayable() -> None:
    committed, unknown, lost = run_leader_change(seed=7)
    assert unknown == 20  # every proposer was told the outcome is unknown
    assert 0 < lost < 20 and len(committed) == 20 - lost  # some made it, some did not
    assert run_leader_change(seed=7) == (committed, unknown, lost)  # same seed, same history


async def test_leadership_changes_are_observable() -> None:
    cluster = SimCluster([1, 2, 3], random.Random(0))
    member = cluster.member(3)
    known = member.leadership()

    async def elect_later() -> None:
        await trio.sleep(0)
        cluster.elect(3)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(elect_later)
        changed = await member.wait_for_leadership_change(known)
    assert changed == Leadership(3, 2) and member.is_leader()
    with pytest.raises(NotLeaderError):
        await cluster.member(1).propose(b"old leader")


async def test_snapshots_bound_what_a_reader_can_replay() -> None:
    cluster = SimCluster([1, 2, 3], random.Random(0))
    member = cluster.member(1)
    for i in range(10):
        await member.propose(bytes([i]))
    member.save_snapshot(Snapshot(6, 1, b"state@6"))
    with pytest.raises(SnapshotRequired) as info:
        await member.read_committed(2)
    assert info.value.snapshot_index == 6
    latest = member.latest_snapshot()
    assert latest is not None and latest.data == b"state@6"
    assert [e.index for e in await member.read_committed(6)] == [7, 8, 9, 10]
    with pytest.raises(ValueError):
        member.save_snapshot(Snapshot(11, 1, b"future"))
