"""MetadataFollower: applies the committed stream, snapshots, restores after compaction."""

from __future__ import annotations

import random

import trio
from sim_quorum import SimCluster

from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.records import (
    RegisterBroker,
    TopicRecord,
    decode_record,
    encode_record,
)
from rillet.metadata_quorum.state import MetadataState
from rillet.raft.errors import SnapshotRequired
from rillet.raft.quorum import Entry, Snapshot


async def test_followers_apply_snapshot_and_restore() -> None:
    cluster = SimCluster([1, 2], random.Random(0))
    leader = cluster.member(1)
    follower = MetadataFollower(cluster.member(1), snapshot_every=5)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(follower.run)
        last = 0
        for i in range(12):
            last = await leader.propose(encode_record(TopicRecord(f"t{i}", f"id{i}")))
        with trio.fail_after(5):
            await follower.wait_applied(last)
        assert len(follower.state.topics) == 12
        snapshot = cluster.member(1).latest_snapshot()
        assert snapshot is not None and snapshot.index >= 5
        nursery.cancel_scope.cancel()

    # a member whose reader is behind the compacted prefix restores the snapshot first
    late_quorum = cluster.member(2)
    prefix = MetadataState()
    for entry in await late_quorum.read_committed(0, 8):
        prefix.apply(entry.index, decode_record(entry.data))
    late_quorum.save_snapshot(Snapshot(8, 1, prefix.to_snapshot()))
    late = MetadataFollower(late_quorum)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(late.run)
        await leader.propose(encode_record(RegisterBroker(1, "i", "h", 1)))
        with trio.fail_after(5):
            await late.wait_applied(13)
        nursery.cancel_scope.cancel()
    assert len(late.state.topics) == 12 and 1 in late.state.brokers
    replayed = MetadataState()
    for entry in cluster.log:
        replayed.apply(entry.index, decode_record(entry.data))
    assert late.state.to_snapshot() == replayed.to_snapshot()


async def test_a_waiter_covered_by_a_restored_snapshot_wakes_without_a_new_entry() -> None:
    """A node that restores a snapshot must wake those waiting for an index it covers (a
    Metadata request waiting for the offset its client saw), not leave them until the next
    entry arrives."""
    state = MetadataState()
    for i in range(1, 6):
        state.apply(i, TopicRecord(f"t{i}", f"id{i}"))
    snapshot = Snapshot(5, 1, state.to_snapshot())

    class CompactedLog:
        """Everything up to 5 is compacted; nothing newer is committed yet."""

        async def read_committed(self, after_index: int, max_entries: int = 1000) -> list[Entry]:
            if after_index < 5:
                raise SnapshotRequired(5)
            await trio.sleep_forever()
            return []

        def save_snapshot(self, snapshot: Snapshot) -> None:
            pass

        def latest_snapshot(self) -> Snapshot | None:
            return snapshot

    follower = MetadataFollower(CompactedLog())
    async with trio.open_nursery() as nursery:
        nursery.start_soon(follower.run)
        with trio.fail_after(5):
            await follower.wait_applied(5)
        nursery.cancel_scope.cancel()
    assert len(follower.state.topics) == 5
