"""PysyncobjQuorum: three in-process voters on loopback (real sockets, real journal files)."""

from __future__ import annotations

import os
import pickle
import socket
import struct
import zlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import trio
from node_process import NodeProcess
from pysyncobj import SyncObj, SyncObjConf

from rillet.raft.errors import NotLeaderError
from rillet.raft.pysyncobj_engine import PysyncobjQuorum

pytestmark = pytest.mark.integration
SECRET = "test-cluster-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def trio_cluster(tmp_path: Path) -> AsyncIterator[dict[int, PysyncobjQuorum]]:
    voters = {i: f"127.0.0.1:{free_port()}" for i in (1, 2, 3)}
    token = trio.lowlevel.current_trio_token()
    members = {i: PysyncobjQuorum(i, voters, tmp_path / f"n{i}", SECRET, token) for i in voters}
    try:
        yield members
    finally:
        for m in members.values():
            m.close()


async def wait_for_leader(members: dict[int, PysyncobjQuorum]) -> PysyncobjQuorum:
    with trio.fail_after(10):
        while True:
            leaders = [m for m in members.values() if m.is_leader()]
            if leaders:
                return leaders[0]
            await trio.sleep(0.02)


async def read_n(member: PysyncobjQuorum, n: int) -> list[bytes]:
    got: list[bytes] = []
    with trio.fail_after(10):
        while len(got) < n:
            got += [e.data for e in await member.read_committed(len(got))]
    return got


async def test_commits_reach_every_voter_in_order(
    trio_cluster: dict[int, PysyncobjQuorum],
) -> None:
    leader = await wait_for_leader(trio_cluster)
    indexes = [await leader.propose(f"r{i}".encode()) for i in range(100)]
    assert indexes == list(range(1, 101))
    for member in trio_cluster.values():
        assert await read_n(member, 100) == [f"r{i}".encode() for i in range(100)]
    follower = next(m for m in trio_cluster.values() if not m.is_leader())
    with pytest.raises(NotLeaderError) as info:
        await follower.propose(b"x")
    assert info.value.leader_id == leader.node_id


async def test_leader_loss_elects_a_new_leader_and_keeps_committed_records(
    trio_cluster: dict[int, PysyncobjQuorum],
) -> None:
    leader = await wait_for_leader(trio_cluster)
    for i in range(20):
        await leader.propose(f"before-{i}".encode())
    leader.close()
    rest = {k: v for k, v in trio_cluster.items() if v is not leader}
    started = trio.current_time()
    with trio.fail_after(10):
        while True:
            new = [m for m in rest.values() if m.is_leader()]
            if new:
                break
            await trio.sleep(0.02)
    failover_s = trio.current_time() - started
    assert failover_s < 5
    await new[0].propose(b"after")
    for member in rest.values():
        got = await read_n(member, 21)
        assert got == [f"before-{i}".encode() for i in range(20)] + [b"after"]


class _Exploit:
    """Unpickling this creates a directory: proof of code execution if it ever runs."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.mkdir, (self.marker,))


def _send_raw(port: int, payload: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(payload)
        try:
            s.recv(1024)
        except (TimeoutError, ConnectionResetError):
            pass


async def test_peer_without_the_secret_can_neither_read_nor_change_state(
    trio_cluster: dict[int, PysyncobjQuorum], tmp_path: Path
) -> None:
    leader = await wait_for_leader(trio_cluster)
    for i in range(5):
        await leader.propose(f"r{i}".encode())
    marker = tmp_path / "pwned"
    body = zlib.compress(pickle.dumps({"type": "append_entries", "x": _Exploit(str(marker))}))
    plaintext = struct.pack("i", len(body)) + body
    for member in trio_cluster.values():
        port = int(member._voters[member.node_id].rsplit(":", 1)[1])
        await trio.to_thread.run_sync(_send_raw, port, plaintext)
        await trio.to_thread.run_sync(_send_raw, port, os.urandom(64))
    assert not marker.exists(), "an unauthenticated peer got code execution"
    # the quorum keeps working and its state is unchanged
    leader = await wait_for_leader(trio_cluster)
    await leader.propose(b"still-serving")
    for member in trio_cluster.values():
        assert await read_n(member, 6) == [f"r{i}".encode() for i in range(5)] + [b"still-serving"]


def test_a_lone_pysyncobj_node_without_a_configured_secret_unpickles_nothing(
    node_factory: Callable[..., NodeProcess], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A real node, engine pysyncobj, Raft port on loopback, no secret configured: another
    local user's pickle sent to that port must not run (the node made a secret of its own,
    so pysyncobj takes only what was sealed with it)."""
    monkeypatch.delenv("RILLET_CLUSTER_SECRET", raising=False)
    raft_port = free_port()
    node = node_factory(f'[quorum]\nengine = "pysyncobj"\nraft_port = {raft_port}\n').start()
    marker = tmp_path / "pwned"
    body = zlib.compress(pickle.dumps({"type": "append_entries", "x": _Exploit(str(marker))}))
    for _ in range(3):
        _send_raw(raft_port, struct.pack("i", len(body)) + body)
    assert not marker.exists(), "a local user ran code in the node"
    assert node.alive()


async def test_control_the_same_payload_executes_without_a_secret(tmp_path: Path) -> None:
    """Keeps the tests of this payload honest: it really is code execution against
    pysyncobj without a password (which PysyncobjQuorum therefore refuses to run)."""
    port = free_port()
    conf = SyncObjConf(bindAddress=f"127.0.0.1:{port}", journalFile=None, autoTickPeriod=0.01)
    bare = SyncObj(f"127.0.0.1:{port}", [], conf)
    try:
        marker = tmp_path / "pwned"
        body = zlib.compress(pickle.dumps({"type": "append_entries", "x": _Exploit(str(marker))}))
        with trio.fail_after(10):
            while not marker.exists():
                await trio.to_thread.run_sync(_send_raw, port, struct.pack("i", len(body)) + body)
                await trio.sleep(0.05)
    finally:
        bare.destroy()
