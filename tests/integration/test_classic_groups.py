"""Classic (JoinGroup/SyncGroup) groups on a real 3-node cluster, through the native internal
requests a Kafka-protocol front end maps Kafka's group apis to.

Members are played by the test as a Kafka client behaves: each on its own connection (a
JoinGroup is held until the round completes), the two-step join, the leader computing the
assignment, followers waiting in SyncGroup, heartbeats answering REBALANCE_IN_PROGRESS,
generation-fenced offset commits, and the controller killed under a Stable group.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from cluster_checks import FAST_ELECTIONS

from rillet.client import BlockingAdmin, NewTopic
from rillet.client.connection import BrokerConnection
from rillet.client.errors import RilletError
from rillet.launcher.local_cluster import LocalCluster, plan_cluster
from rillet.wire import classic_group_messages as cgm
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode

pytestmark = pytest.mark.integration

GROUP, TOPIC = "classic-billing", "orders"
CONFIG = FAST_ELECTIONS + "broker_session_timeout_ms = 2000\n"
E = ErrorCode


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(plan_cluster(tmp_path / "cluster", 3, CONFIG)) as c:
        c.start()
        with BlockingAdmin(c.bootstrap) as admin:
            admin.create_topics([NewTopic(TOPIC, 2, replication_factor=3)])
        yield c


def addresses(cluster: LocalCluster, ids: list[int]) -> list[tuple[str, int]]:
    out = []
    for i in ids:
        host, port = cluster.plan.node(i).bootstrap.rsplit(":", 1)
        out.append((host, int(port)))
    return out


async def call(address: tuple[str, int], request: Any, timeout_s: float = 60) -> Any:
    """One request on its own connection; a broken node raises a plain RilletError."""
    try:
        async with trio.open_nursery() as nursery:
            conn = BrokerConnection(*address, client_id="classic-test")
            try:
                await conn.connect(nursery, 5)
                return await conn.request(request, timeout_s)
            finally:
                await conn.aclose()
    except BaseExceptionGroup as group:
        failed, _ = group.split(RilletError)
        while isinstance(failed, BaseExceptionGroup):
            failed = failed.exceptions[0]
        if failed is None:
            raise
        raise failed from None


async def coordinator(nodes: list[tuple[str, int]]) -> tuple[str, int]:
    """The coordinator's address once one of ``nodes`` names a live one that serves."""
    while True:
        for node in nodes:
            try:
                found = await call(node, gm.FindCoordinatorRequest(GROUP), 5)
                if found.error_code != E.NONE or (found.host, found.port) not in nodes:
                    continue
                probe = await call((found.host, found.port), cgm.ClassicListGroupsRequest(), 5)
                if probe.error_code == E.NONE:
                    heartbeat = cgm.ClassicHeartbeatRequest(GROUP, -1, "probe")
                    answer = await call((found.host, found.port), heartbeat, 5)
                    if answer.error_code != E.NOT_COORDINATOR:
                        return found.host, found.port
            except RilletError:
                pass
        await trio.sleep(0.2)


def join_request(member_id: str, subscription: bytes) -> cgm.ClassicJoinGroupRequest:
    return cgm.ClassicJoinGroupRequest(
        GROUP,
        10_000,
        20_000,
        member_id,
        None,
        "consumer",
        [cgm.ClassicProtocol("range", subscription), cgm.ClassicProtocol("roundrobin", b"")],
        "classic-test",
        "/127.0.0.1",
        True,
    )


async def two_step_join(coord: tuple[str, int], subscription: bytes) -> Any:
    first = await call(coord, join_request("", subscription))
    assert first.error_code == E.MEMBER_ID_REQUIRED and first.member_id
    return await call(coord, join_request(first.member_id, subscription))


async def test_classic_group_rebalances_fences_and_survives_the_controller(
    cluster: LocalCluster,
) -> None:
    nodes = addresses(cluster, [1, 2, 3])
    with trio.fail_after(120):
        coord = await coordinator(nodes)
        a = await two_step_join(coord, b"sub-a")
        assert (a.error_code, a.generation_id, a.leader_id) == (E.NONE, 1, a.member_id)
        alone = cgm.ClassicMemberAssignment(a.member_id, b"a:0,1")
        sync = cgm.ClassicSyncGroupRequest(GROUP, 1, a.member_id, assignments=[alone])
        assert (await call(coord, sync)).assignment == b"a:0,1"

        # B joins: its join is held until A, told by its heartbeat, rejoins.
        answers: dict[str, Any] = {}

        async def join_b() -> None:
            answers["b"] = await two_step_join(coord, b"sub-b")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(join_b)
            beat = cgm.ClassicHeartbeatRequest(GROUP, 1, a.member_id)
            while (await call(coord, beat)).error_code != E.REBALANCE_IN_PROGRESS:
                await trio.sleep(0.05)
            answers["a"] = await call(coord, join_request(a.member_id, b"sub-a"))
        leader, b = answers["a"], answers["b"]
        assert leader.generation_id == b.generation_id == 2
        assert leader.leader_id == b.leader_id == a.member_id
        assert {(m.member_id, m.metadata) for m in leader.members} == {
            (a.member_id, b"sub-a"),
            (b.member_id, b"sub-b"),
        }
        assert b.members == []

        synced: dict[str, bytes] = {}

        async def sync_b() -> None:
            req = cgm.ClassicSyncGroupRequest(GROUP, 2, b.member_id)
            synced["b"] = (await call(coord, req)).assignment

        async with trio.open_nursery() as nursery:
            nursery.start_soon(sync_b)
            await trio.sleep(0.2)  # B waits for the leader's assignment (either order works)
            plan = [
                cgm.ClassicMemberAssignment(a.member_id, b"a:0"),
                cgm.ClassicMemberAssignment(b.member_id, b"b:1"),
            ]
            req = cgm.ClassicSyncGroupRequest(GROUP, 2, a.member_id, assignments=plan)
            synced["a"] = (await call(coord, req)).assignment
        assert synced == {"a": b"a:0", "b": b"b:1"}

        # Offset commits are fenced by generation and member.
        offsets = [gm.OffsetCommitPartition(TOPIC, 0, 5)]
        ok = await call(coord, gm.OffsetCommitRequest(GROUP, a.member_id, 2, offsets))
        assert ok.error_code == E.NONE and ok.partitions[0].error_code == E.NONE
        stale = await call(coord, gm.OffsetCommitRequest(GROUP, a.member_id, 1, offsets))
        assert stale.error_code == E.ILLEGAL_GENERATION
        stranger = await call(coord, gm.OffsetCommitRequest(GROUP, "", -1, offsets))
        assert stranger.error_code == E.UNKNOWN_MEMBER_ID

        described = await call(coord, cgm.ClassicDescribeGroupsRequest([GROUP]))
        group = described.groups[0]
        assert (group.group_state, group.protocol_type, group.protocol_data) == (
            "Stable",
            "consumer",
            "range",
        )
        assert {m.member_assignment for m in group.members} == {b"a:0", b"b:1"}
        listed = await call(coord, cgm.ClassicListGroupsRequest(["stable"]))
        assert [(g.group_id, g.protocol_type) for g in listed.groups] == [(GROUP, "consumer")]
        native = await call(coord, gm.ListGroupsRequest())  # what `rillet groups list` shows
        assert gm.GroupListing(GROUP, 2, 2) in native.groups
        native_described = await call(coord, gm.DescribeGroupsRequest([GROUP]))
        assert native_described.groups[0].assignor == "range"
        assert len(native_described.groups[0].members) == 2

        # The controller dies: the next one rebuilds the group from the metadata log.
        dead = next(i for i, n in enumerate(nodes, start=1) if n == coord)
        cluster.kill(dead)
        survivors = [n for n in nodes if n != coord]
        coord = await coordinator(survivors)
        beat_a = cgm.ClassicHeartbeatRequest(GROUP, 2, a.member_id)
        assert (await call(coord, beat_a)).error_code == E.NONE
        fetched = await call(
            coord, gm.OffsetFetchRequest(GROUP, [gm.GroupTopicPartitions(TOPIC, [0])])
        )
        assert fetched.offsets[0].offset == 5

        left = await call(
            coord, cgm.ClassicLeaveGroupRequest(GROUP, [cgm.ClassicLeavingMember(b.member_id)])
        )
        assert left.members[0].error_code == E.NONE
        assert (await call(coord, beat_a)).error_code == E.REBALANCE_IN_PROGRESS
        again = await call(coord, join_request(a.member_id, b"sub-a"))
        assert (again.generation_id, [m.member_id for m in again.members]) == (3, [a.member_id])


class Member:
    """A classic member as a Kafka client runs one: find the coordinator, join (two steps),
    sync (computing the assignment when it leads), heartbeat, and start over on errors."""

    def __init__(self, nodes: list[tuple[str, int]], name: str) -> None:
        self.nodes, self.name = nodes, name
        self.member_id, self.generation = "", -1
        self.assignment: bytes | None = None
        self.rejoins = 0

    async def run(self) -> None:
        coord: tuple[str, int] | None = None
        while True:
            try:
                if coord is None:
                    coord = await coordinator(self.nodes)
                if self.assignment is None:
                    await self._join_and_sync(coord)
                else:
                    beat = cgm.ClassicHeartbeatRequest(GROUP, self.generation, self.member_id)
                    code = (await call(coord, beat, 10)).error_code
                    if code == E.NOT_COORDINATOR:
                        coord = None
                    elif code != E.NONE:
                        self._rejoin(code)
                    await trio.sleep(0.1)
            except RilletError:  # the node died or the connection broke: find the next one
                coord = None
                await trio.sleep(0.1)

    def _rejoin(self, code: int) -> None:
        self.assignment = None
        self.rejoins += 1
        if code in (E.UNKNOWN_MEMBER_ID, E.ILLEGAL_GENERATION):
            self.member_id, self.generation = "", -1

    async def _join_and_sync(self, coord: tuple[str, int]) -> None:
        joined = await call(coord, join_request(self.member_id, self.name.encode()))
        if joined.error_code == E.MEMBER_ID_REQUIRED:
            self.member_id = joined.member_id
            return
        if joined.error_code != E.NONE:
            self._rejoin(joined.error_code)
            raise RilletError(f"join: {E(joined.error_code).name}")
        self.member_id, self.generation = joined.member_id, joined.generation_id
        plan = []
        if joined.leader_id == joined.member_id:
            ids = sorted(m.member_id for m in joined.members)
            plan = [
                cgm.ClassicMemberAssignment(m, f"{i}/{len(ids)}".encode())
                for i, m in enumerate(ids)
            ]
        req = cgm.ClassicSyncGroupRequest(GROUP, self.generation, self.member_id, assignments=plan)
        synced = await call(coord, req)
        if synced.error_code == E.NONE:
            self.assignment = synced.assignment
        else:
            self._rejoin(synced.error_code)


def settled_on(members: list[Member]) -> bool:
    generations = {m.generation for m in members}
    parts = sorted(m.assignment for m in members if m.assignment is not None)
    n = len(members)
    return len(generations) == 1 and parts == [f"{i}/{n}".encode() for i in range(n)]


async def test_a_round_cut_by_the_controller_s_death_completes_under_the_next(
    cluster: LocalCluster,
) -> None:
    nodes = addresses(cluster, [1, 2, 3])
    a, b, c = Member(list(nodes), "a"), Member(list(nodes), "b"), Member(list(nodes), "c")
    async with trio.open_nursery() as nursery:
        with trio.fail_after(120):
            nursery.start_soon(a.run)
            nursery.start_soon(b.run)
            while not settled_on([a, b]):
                await trio.sleep(0.05)
            first = a.generation
            coord = await coordinator(nodes)
            nursery.start_soon(c.run)  # a round starts...
            describe = cgm.ClassicDescribeGroupsRequest([GROUP])
            while (await call(coord, describe)).groups[0].group_state != "PreparingRebalance":
                await trio.sleep(0.01)
            cluster.kill(nodes.index(coord) + 1)  # ...and the controller dies in the middle of it
            killed_at = trio.current_time()
            for m in (a, b, c):
                m.nodes.remove(coord)
            while not settled_on([a, b, c]):
                await trio.sleep(0.05)
            print(f"settled {trio.current_time() - killed_at:.2f} s after the controller died")
            assert a.generation > first
        nursery.cancel_scope.cancel()
