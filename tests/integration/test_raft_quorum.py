"""Our own Raft engine (RaftQuorum) with real sockets and real files, three voters in one
trio run: election, commits, losing the leader (and failing over faster than an election
timeout), and a voter restarting from its directory.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest
import trio

from rillet.raft.errors import NotLeaderError, ProposalOutcomeUnknown
from rillet.raft.raft_quorum import RaftQuorum, RaftSettings
from rillet.raft.transport import PeerAddress
from rillet.wire import disk_io

pytestmark = pytest.mark.integration

SECRET = "a-cluster-secret-of-some-length"
SETTINGS = RaftSettings(tick_ms=20, election_timeout_ticks=10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Voters:
    def __init__(self, base: Path, settings: RaftSettings = SETTINGS) -> None:
        self.base = base
        self.settings = settings
        self.addresses = {i: PeerAddress("127.0.0.1", free_port()) for i in (1, 2, 3)}
        self.members: dict[int, RaftQuorum] = {}
        self.scopes: dict[int, trio.CancelScope] = {}

    async def start(self, nursery: trio.Nursery, node_id: int) -> None:
        quorum = RaftQuorum(
            node_id, self.addresses, self.base / f"v{node_id}", SECRET, self.settings
        )
        scope = trio.CancelScope()

        async def run(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
            with scope:
                try:
                    await quorum.run(task_status=task_status)
                finally:
                    quorum.close()

        await nursery.start(run)
        self.members[node_id] = quorum
        self.scopes[node_id] = scope

    def stop(self, node_id: int) -> None:
        """Like a process kill: its tasks end, what it synced stays on disk."""
        self.scopes.pop(node_id).cancel()
        self.members.pop(node_id)

    async def leader(self) -> RaftQuorum:
        with trio.fail_after(10):
            while True:
                leaders = [m for m in self.members.values() if m.is_leader()]
                if len(leaders) == 1:
                    return leaders[0]
                await trio.sleep(0.01)

    async def propose(self, data: bytes) -> int:
        with trio.fail_after(20):
            while True:
                leader = await self.leader()
                try:
                    return await leader.propose(data)
                except (NotLeaderError, ProposalOutcomeUnknown):
                    await trio.sleep(0.02)


async def read_all(quorum: RaftQuorum, count: int) -> list[bytes]:
    out: list[bytes] = []
    after = 0
    with trio.fail_after(10):
        while len(out) < count:
            entries = await quorum.read_committed(after)
            out += [e.data for e in entries]
            after = entries[-1].index
    return out


async def test_three_voters_elect_commit_fail_over_and_catch_up(tmp_path: Path) -> None:
    voters = Voters(tmp_path)
    async with trio.open_nursery() as nursery:
        for i in (1, 2, 3):
            await voters.start(nursery, i)
        first = [f"a{i}".encode() for i in range(50)]
        for data in first:
            await voters.propose(data)
        for member in voters.members.values():
            assert await read_all(member, 50) == first
        old = await voters.leader()
        voters.stop(old.node_id)
        started = trio.current_time()
        await voters.propose(b"after")
        print(f"new leader committed {1000 * (trio.current_time() - started):.0f} ms after")
        await voters.start(nursery, old.node_id)  # from its directory
        back = voters.members[old.node_id]
        assert await read_all(back, 51) == [*first, b"after"]
        nursery.cancel_scope.cancel()


async def test_a_killed_leader_is_replaced_before_any_follower_could_time_out(
    tmp_path: Path,
) -> None:
    """A killed leader's port refuses connections at once; its followers take that as proof
    that it is gone and campaign within a few ticks. Without it they wait out an election
    timeout from the last heartbeat: at least (T - 1) ticks after the kill."""
    settings = RaftSettings(tick_ms=20, election_timeout_ticks=25)  # timeouts of 0.5-1 s
    voters = Voters(tmp_path, settings)
    async with trio.open_nursery() as nursery:
        for i in (1, 2, 3):
            await voters.start(nursery, i)
        await voters.propose(b"before")
        old = await voters.leader()
        voters.stop(old.node_id)
        with trio.fail_after((settings.election_timeout_ticks - 1) * settings.tick_ms / 1000):
            await voters.propose(b"after")
        new = await voters.leader()
        assert new.node_id != old.node_id
        assert await read_all(new, 2) == [b"before", b"after"]
        nursery.cancel_scope.cancel()


async def test_concurrent_proposals_commit_in_one_order_everywhere(tmp_path: Path) -> None:
    voters = Voters(tmp_path)
    async with trio.open_nursery() as nursery:
        for i in (1, 2, 3):
            await voters.start(nursery, i)
        leader = await voters.leader()
        indexes: list[int] = []

        async def proposer(k: int) -> None:
            for j in range(20):
                indexes.append(await leader.propose(f"p{k}-{j}".encode()))

        async with trio.open_nursery() as batch:
            for k in range(20):
                batch.start_soon(proposer, k)
        assert len(set(indexes)) == 400
        logs = [await read_all(m, 400) for m in voters.members.values()]
        assert logs[0] == logs[1] == logs[2] and len(set(logs[0])) == 400
        nursery.cancel_scope.cancel()


async def test_commit_index_never_names_a_leader_no_op(tmp_path: Path) -> None:
    """Regression: a new leader's no-op entry commits but is never handed to readers, so a
    commit index naming it made a new controller wait forever for its state machine to apply
    "the commit index" (found when the leader started sending appends before its fsync)."""
    voters = Voters(tmp_path)
    async with trio.open_nursery() as nursery:
        for i in (1, 2, 3):
            await voters.start(nursery, i)
        leader = await voters.leader()
        with trio.fail_after(10):
            while leader._core.status().commit_index < 1:  # the no-op
                await trio.sleep(0.01)
        assert leader.commit_index() == 0
        index = await leader.propose(b"first")
        assert leader.commit_index() == index
        assert [e.index for e in await leader.read_committed(0)] == [index]
        nursery.cancel_scope.cancel()


async def test_acknowledgements_are_carried_out_where_they_are_read_and_syncs_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leader commits on an acknowledgement in the connection task that read it (no
    hand-over to its Ready task), every fdatasync (leader's and followers') runs in a worker
    thread, never in the event loop, and commits stay correct."""
    sync_threads: list[int] = []
    fdatasync = os.fdatasync

    def recorded_fdatasync(fd: int) -> None:
        sync_threads.append(threading.get_ident())
        fdatasync(fd)

    monkeypatch.setattr(disk_io, "fdatasync", recorded_fdatasync)
    voters = Voters(tmp_path)
    async with trio.open_nursery() as nursery:
        for i in (1, 2, 3):
            await voters.start(nursery, i)
        leader = await voters.leader()
        before = leader.readies_in_connection_tasks
        data = [f"e{i}".encode() for i in range(40)]
        for item in data:
            await leader.propose(item)
        for member in voters.members.values():
            assert await read_all(member, 40) == data
        # Each acknowledgement is one; a few may have come in one read.
        assert leader.readies_in_connection_tasks - before >= 20
        assert len(sync_threads) >= 40
        assert threading.get_ident() not in sync_threads
        nursery.cancel_scope.cancel()


async def test_a_failed_sync_where_a_message_was_read_stops_the_member(tmp_path: Path) -> None:
    """The connection task must not swallow a storage error as a broken connection: the
    member stops, as when its Ready task fails."""
    voters = Voters(tmp_path)

    def broken_sync() -> None:
        raise OSError("the disk is gone")

    with pytest.raises(BaseExceptionGroup) as stopped:
        async with trio.open_nursery() as nursery:
            for i in (1, 2, 3):
                await voters.start(nursery, i)
            leader = await voters.leader()
            follower = next(m for m in voters.members.values() if m is not leader)
            follower._storage.sync = broken_sync  # type: ignore[method-assign]
            await leader.propose(b"x")  # the other follower makes the majority
            with trio.move_on_after(10):
                await trio.sleep_forever()
            raise AssertionError("the member went on after its sync failed")
    assert stopped.value.subgroup(OSError) is not None


async def test_a_single_voter_leads_after_its_vote_is_durable_and_commits(tmp_path: Path) -> None:
    """A lone voter wins with its own vote, and leads only once that vote is on disk (it
    takes one Ready more than it did): it must still lead and commit, and keep its
    directory id across a restart."""
    address = {1: PeerAddress("127.0.0.1", free_port())}
    directory_ids = []
    for attempt in range(2):
        quorum = RaftQuorum(1, address, tmp_path / "v1", SECRET, SETTINGS)
        async with trio.open_nursery() as nursery:
            await nursery.start(quorum.run)
            with trio.fail_after(10):
                while not quorum.is_leader():
                    await trio.sleep(0.01)
                index = await quorum.propose(b"x%d" % attempt)
            assert index >= 1
            nursery.cancel_scope.cancel()
        quorum.close()
        directory_ids.append((tmp_path / "v1" / "directory-id").read_text())
    assert directory_ids[0] == directory_ids[1] and len(directory_ids[0]) == 33
