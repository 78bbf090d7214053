"""Voter changes in our own Raft engine (RaftQuorum) with real sockets and real files, while
a writer keeps proposing: nodes started as observers are added, voters removed, a voter
whose directory was wiped replaced, and the configuration survives restarts. Afterwards
every acknowledged entry is in the committed log exactly once.
"""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest
import trio

from rillet.raft.errors import NotLeaderError, ProposalOutcomeUnknown, RaftError
from rillet.raft.raft_quorum import RaftQuorum, RaftSettings
from rillet.raft.transport import PeerAddress

pytestmark = pytest.mark.integration

SECRET = "a-cluster-secret-of-some-length"
SETTINGS = RaftSettings(tick_ms=20, election_timeout_ticks=10, catch_up_timeout_ms=10_000)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Replicas:
    """Nodes 1-3 configured as voters; any other node starts as an observer that knows them."""

    def __init__(self, base: Path, ids: range) -> None:
        self.base = base
        self.addresses = {i: PeerAddress("127.0.0.1", free_port()) for i in ids}
        self.configured = {i: self.addresses[i] for i in (1, 2, 3)}
        self.members: dict[int, RaftQuorum] = {}
        self.scopes: dict[int, trio.CancelScope] = {}

    def raft(self, node_id: int) -> str:
        a = self.addresses[node_id]
        return f"{a.host}:{a.port}"

    async def start(self, nursery: trio.Nursery, node_id: int) -> RaftQuorum:
        quorum = RaftQuorum(
            node_id,
            self.configured,
            self.base / f"n{node_id}",
            SECRET,
            SETTINGS,
            listen=self.addresses[node_id],
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
        return quorum

    def stop(self, node_id: int) -> None:
        self.scopes.pop(node_id).cancel()
        self.members.pop(node_id)

    async def leader(self) -> RaftQuorum:
        with trio.fail_after(10):
            while True:
                leaders = [m for m in self.members.values() if m.is_leader()]
                if len(leaders) == 1:
                    return leaders[0]
                await trio.sleep(0.01)

    async def change(self, add: int | None = None, remove: int | None = None) -> None:
        """One voter change on whoever leads, retried across leader changes."""
        with trio.fail_after(30):
            while True:
                leader = await self.leader()
                try:
                    if add is not None:
                        node = self.members[add]
                        await leader.add_voter(add, node.directory_id, self.raft(add))
                    elif remove is not None:
                        await leader.remove_voter(remove)
                    return
                except (NotLeaderError, ProposalOutcomeUnknown):
                    await trio.sleep(0.05)
                except RaftError as exc:  # already done by an attempt that looked lost
                    if "already a voter" in str(exc) or "is not a voter" in str(exc):
                        return
                    raise


class Writer:
    """Proposes numbered entries one after another; remembers the acknowledged ones."""

    def __init__(self, replicas: Replicas) -> None:
        self.replicas = replicas
        self.acknowledged: list[bytes] = []
        self.attempted = 0
        self.scope = trio.CancelScope()

    async def run(self) -> None:
        with self.scope:
            await self._write()

    async def _write(self) -> None:
        while True:
            data = f"w{self.attempted}".encode()
            self.attempted += 1
            try:
                leader = await self.replicas.leader()
                await leader.propose(data)
            except (NotLeaderError, ProposalOutcomeUnknown):
                await trio.sleep(0.02)
                continue
            self.acknowledged.append(data)


async def committed(quorum: RaftQuorum, through: int) -> list[bytes]:
    out: list[bytes] = []
    after = 0
    with trio.fail_after(10):
        while after < through:
            entries = await quorum.read_committed(after)
            out += [e.data for e in entries]
            after = entries[-1].index
    return out


async def check_exactly_once(replicas: Replicas, writer: Writer, reader: RaftQuorum) -> None:
    """The cluster as it now is still commits; then every acknowledged entry is in
    ``reader``'s committed log exactly once."""
    count = len(writer.acknowledged)
    with trio.fail_after(10):
        while len(writer.acknowledged) < count + 20:
            await trio.sleep(0.01)
    writer.scope.cancel()
    leader = await replicas.leader()
    through = leader.commit_index()
    with trio.fail_after(10):
        while reader.commit_index() < through:
            await trio.sleep(0.01)
    log = await committed(reader, through)
    for data in writer.acknowledged:
        assert log.count(data) == 1, data


async def wait_voters(quorum: RaftQuorum, voters: set[int]) -> None:
    with trio.fail_after(10):
        while quorum.voters != voters:
            await trio.sleep(0.01)


async def test_add_a_fourth_and_fifth_voter_then_remove_two(tmp_path: Path) -> None:
    replicas = Replicas(tmp_path, range(1, 6))
    writer = Writer(replicas)
    async with trio.open_nursery() as nursery:
        for i in range(1, 6):
            await replicas.start(nursery, i)  # 4 and 5: observers, until added
        await replicas.leader()
        nursery.start_soon(writer.run)
        await replicas.change(add=4)
        await replicas.change(add=5)
        await replicas.change(remove=1)
        await replicas.change(remove=2)
        for i in (3, 4, 5):
            await wait_voters(replicas.members[i], {3, 4, 5})
        replicas.stop(1)
        replicas.stop(2)
        # The three voters left commit on their own, and a restart keeps the configuration.
        replicas.stop(4)
        back = await replicas.start(nursery, 4)
        assert back.voters == {3, 4, 5}
        progress = (await replicas.leader()).replica_progress()
        assert {r.node_id for r in progress if r.voter} == {3, 4, 5}
        await check_exactly_once(replicas, writer, back)
        nursery.cancel_scope.cancel()


async def test_replace_a_dead_voter_whose_directory_was_deleted(tmp_path: Path) -> None:
    replicas = Replicas(tmp_path, range(1, 4))
    writer = Writer(replicas)
    async with trio.open_nursery() as nursery:
        for i in (1, 2, 3):
            await replicas.start(nursery, i)
        await replicas.leader()
        nursery.start_soon(writer.run)
        dead = next(i for i in (1, 2, 3) if not replicas.members[i].is_leader())
        old_directory = replicas.members[dead].directory_id
        replicas.stop(dead)
        shutil.rmtree(tmp_path / f"n{dead}")  # the machine is gone with its disk
        await replicas.change(remove=dead)
        fresh = await replicas.start(nursery, dead)  # a new machine, same id and address
        assert fresh.directory_id != old_directory
        await replicas.change(add=dead)
        for member in replicas.members.values():
            await wait_voters(member, {1, 2, 3})
        leader = await replicas.leader()
        voter = leader.membership.configuration().voter(dead)
        assert voter is not None and voter.directory_id == fresh.directory_id
        await check_exactly_once(replicas, writer, fresh)
        nursery.cancel_scope.cancel()
