"""PysyncobjQuorum snapshots: they survive a restart and reach a follower that lags behind.

pysyncobj persists a member as its journal plus, after a log compaction, a full dump of the
replicated state (``raft.snapshot`` in the data dir). A restart reloads the dump on its first
tick and replays the journal's tail after it; a follower behind the leader's compacted
journal is sent the leader's dump instead of entries. The metadata snapshot must be inside
that dump, next to the entries it replaced, for either path to end consistent.
"""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest
import trio

from rillet.raft.errors import SnapshotRequired
from rillet.raft.pysyncobj_engine import PysyncobjQuorum
from rillet.raft.quorum import Entry, Snapshot

pytestmark = pytest.mark.integration
SECRET = "test-cluster-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_for_leader(members: dict[int, PysyncobjQuorum]) -> PysyncobjQuorum:
    with trio.fail_after(10):
        while True:
            leaders = [m for m in members.values() if m.is_leader()]
            if leaders:
                return leaders[0]
            await trio.sleep(0.02)


async def close_and_wait(*members: PysyncobjQuorum) -> None:
    """Close, then wait until the tick threads let go of their ports and journals."""
    for member in members:
        member.close()
    with trio.fail_after(10):
        while any(member._log.tick_thread_alive() for member in members):
            await trio.sleep(0.02)


async def wait_compacted(member: PysyncobjQuorum, data_dir: Path) -> None:
    """Wait until pysyncobj wrote its full dump and dropped the journal entries it covers.

    A compacted journal keeps only the two entries the dump ends with; call this while
    nothing is being proposed.
    """
    with trio.fail_after(10):
        while not (data_dir / "raft.snapshot").exists() or member._log.getStatus()["log_len"] > 2:
            await trio.sleep(0.02)


async def follow(member: PysyncobjQuorum, last_index: int) -> tuple[Snapshot | None, list[Entry]]:
    """Read like MetadataFollower: from 0, restoring the latest snapshot when required."""
    restored: Snapshot | None = None
    entries: list[Entry] = []
    applied = 0
    with trio.fail_after(10):
        while applied < last_index:
            try:
                batch = await member.read_committed(applied)
            except SnapshotRequired as required:
                restored = member.latest_snapshot()
                assert restored is not None, "entries were compacted but no snapshot is stored"
                assert restored.index >= required.snapshot_index
                applied, entries = restored.index, []
                continue
            assert [e.index for e in batch] == list(range(applied + 1, applied + 1 + len(batch)))
            entries += batch
            applied = batch[-1].index
    return restored, entries


async def test_a_restart_restores_the_snapshot_and_the_entries_after_it(tmp_path: Path) -> None:
    voters = {1: f"127.0.0.1:{free_port()}"}
    data_dir = tmp_path / "n1"
    token = trio.lowlevel.current_trio_token()

    first = PysyncobjQuorum(1, voters, data_dir, SECRET, token)
    try:
        await wait_for_leader({1: first})
        for i in range(10):
            assert await first.propose(f"r{i}".encode()) == i + 1
        (sixth,) = await first.read_committed(5, max_entries=1)
        snapshot = Snapshot(6, sixth.term, b"state through 6")
        first.save_snapshot(snapshot)
        assert first.latest_snapshot() == snapshot  # pending, covers only applied entries
        with trio.fail_after(10):  # installed on the tick thread: entries 1..6 trimmed
            while True:
                try:
                    await first.read_committed(0)
                except SnapshotRequired as required:
                    assert required.snapshot_index == 6
                    break
                await trio.sleep(0.02)
        # installing the snapshot forced a log compaction: the dump holds it
        await wait_compacted(first, data_dir)
        for i in range(10, 20):  # these are only in the journal
            await first.propose(f"r{i}".encode())
        before = await first.read_committed(6)
        assert [e.data for e in before] == [f"r{i}".encode() for i in range(6, 20)]
    finally:
        await close_and_wait(first)

    second = PysyncobjQuorum(1, voters, data_dir, SECRET, token)
    try:
        # the dump is loaded on the first tick, then the journal's tail is replayed
        with trio.fail_after(10):
            while second.commit_index() < 20:
                await trio.sleep(0.02)
        assert second.commit_index() == 20
        assert second.latest_snapshot() == snapshot
        with pytest.raises(SnapshotRequired):
            await second.read_committed(0)
        after = await second.read_committed(6)
        assert [(e.index, e.data) for e in after] == [(e.index, e.data) for e in before]
        # and it goes on from there
        await wait_for_leader({1: second})
        assert await second.propose(b"after-restart") == 21
    finally:
        await close_and_wait(second)


async def test_a_snapshot_beyond_the_applied_index_trims_nothing_until_applied(
    tmp_path: Path,
) -> None:
    member = PysyncobjQuorum(
        1,
        {1: f"127.0.0.1:{free_port()}"},
        tmp_path / "n1",
        SECRET,
        trio.lowlevel.current_trio_token(),
    )
    try:
        await wait_for_leader({1: member})
        for i in range(3):
            await member.propose(f"r{i}".encode())
        ahead = Snapshot(5, 1, b"state through 5")
        member.save_snapshot(ahead)
        # several ticks pass (each commit takes one): nothing unapplied is trimmed
        await member.propose(b"r3")
        assert member.latest_snapshot() is None
        assert [e.data for e in await member.read_committed(0)] == [b"r0", b"r1", b"r2", b"r3"]
        await member.propose(b"r4")
        with trio.fail_after(10):
            while True:
                try:
                    await member.read_committed(0)
                except SnapshotRequired as required:
                    assert required.snapshot_index == 5
                    break
                await trio.sleep(0.02)
        assert member.latest_snapshot() == ahead
        # an older snapshot saved later changes nothing
        member.save_snapshot(Snapshot(2, 1, b"older"))
        await member.propose(b"r5")
        assert member.latest_snapshot() == ahead
        assert [e.data for e in await member.read_committed(5)] == [b"r5"]
    finally:
        await close_and_wait(member)


@pytest.mark.parametrize("keep_data_dir", [False, True], ids=["empty-dir", "lagging"])
async def test_a_follower_behind_compaction_gets_the_leaders_snapshot(
    tmp_path: Path, keep_data_dir: bool
) -> None:
    voters = {i: f"127.0.0.1:{free_port()}" for i in (1, 2, 3)}
    token = trio.lowlevel.current_trio_token()
    members: dict[int, PysyncobjQuorum] = {}
    try:
        for i in voters:
            members[i] = PysyncobjQuorum(i, voters, tmp_path / f"n{i}", SECRET, token)
        leader = await wait_for_leader(members)
        for i in range(20):
            await leader.propose(f"r{i}".encode())
        behind_id, other_id = (i for i in voters if i != leader.node_id)
        await close_and_wait(members.pop(behind_id))

        for i in range(20, 30):  # missed by the stopped follower
            await leader.propose(f"r{i}".encode())
        (entry,) = await leader.read_committed(24, max_entries=1)
        snapshot = Snapshot(25, entry.term, b"state through 25")
        # every voter's MetadataFollower snapshots the same state: whoever leads has one
        for member in (leader, members[other_id]):
            member.save_snapshot(snapshot)
        for nid in (leader.node_id, other_id):
            await wait_compacted(members[nid], tmp_path / f"n{nid}")

        if not keep_data_dir:
            shutil.rmtree(tmp_path / f"n{behind_id}")
        members[behind_id] = PysyncobjQuorum(
            behind_id, voters, tmp_path / f"n{behind_id}", SECRET, token
        )
        for i in range(30, 35):
            await leader.propose(f"r{i}".encode())

        expected = [(i + 1, f"r{i}".encode()) for i in range(25, 35)]
        for member in members.values():
            restored, entries = await follow(member, 35)
            assert restored == snapshot, f"node {member.node_id}"
            assert [(e.index, e.data) for e in entries] == expected, f"node {member.node_id}"
        assert members[behind_id].latest_snapshot() == snapshot
    finally:
        await close_and_wait(*members.values())
