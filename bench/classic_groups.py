"""Classic (JoinGroup/SyncGroup) group benchmark: how long rounds take on the coordinator.

A local 3-node cluster; ``--members`` members per group, each a trio task with its own
connection to the coordinator, behaving like a Kafka client (two-step join, the leader sends
the assignment, heartbeats every ``--heartbeat-ms``; Kafka clients' default is 3000, which
then dominates how soon members notice a rebalance). ``--rounds`` times, on a new group:

- ``first_generation_ms``: all members start at once; until all are Stable in one generation
  (members starting together share the first generation: no initial delay);
- ``after_leave_ms``: one member leaves (LeaveGroup); until the others are Stable again;
- ``after_join_ms``: a new member joins; until everyone is Stable in the next generation.

Prints one JSON line (see bench/_common.py); progress goes to stderr.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

import trio
from _common import emit, parser

from rillet.client.cluster import ClusterClient
from rillet.client.connection import BrokerConnection
from rillet.launcher.local_cluster import LocalCluster, plan_cluster
from rillet.wire import classic_group_messages as cgm
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode

E = ErrorCode


class Member:
    def __init__(self, bootstrap: str, group: str, name: str, heartbeat_s: float) -> None:
        self.bootstrap, self.group, self.name, self.heartbeat_s = (
            bootstrap,
            group,
            name,
            heartbeat_s,
        )
        self.member_id, self.generation = "", -1
        self.stable = False
        self.leave = trio.Event()

    def _join_request(self) -> cgm.ClassicJoinGroupRequest:
        protocols = [cgm.ClassicProtocol("range", self.name.encode())]
        return cgm.ClassicJoinGroupRequest(
            self.group, 10_000, 30_000, self.member_id, None, "consumer", protocols, "bench"
        )

    async def run(self) -> None:
        async with ClusterClient(self.bootstrap) as cluster:
            found = await cluster.request_any(gm.FindCoordinatorRequest(self.group))
            conn = await cluster.coordinator_connection(found.node_id, found.host, found.port)
            while not self.leave.is_set():
                if not self.stable:
                    await self._join_and_sync(conn)
                    continue
                with trio.move_on_after(self.heartbeat_s):
                    await self.leave.wait()
                if self.leave.is_set():
                    break
                beat = cgm.ClassicHeartbeatRequest(self.group, self.generation, self.member_id)
                code = (await conn.request(beat, 30)).error_code
                if code != E.NONE:
                    self.stable = False
                    if code in (E.UNKNOWN_MEMBER_ID, E.ILLEGAL_GENERATION):
                        self.member_id = ""
            gone = cgm.ClassicLeavingMember(self.member_id)
            await conn.request(cgm.ClassicLeaveGroupRequest(self.group, [gone]), 30)

    async def _join_and_sync(self, conn: BrokerConnection) -> None:
        joined = await conn.request(self._join_request(), 60)
        if joined.error_code == E.MEMBER_ID_REQUIRED:
            self.member_id = joined.member_id
            return
        if joined.error_code != E.NONE:
            raise RuntimeError(f"{self.name}: join failed: {E(joined.error_code).name}")
        self.member_id, self.generation = joined.member_id, joined.generation_id
        plan = [
            cgm.ClassicMemberAssignment(m.member_id, m.member_id.encode()) for m in joined.members
        ]
        sync = cgm.ClassicSyncGroupRequest(self.group, self.generation, self.member_id)
        if plan:
            sync = cgm.ClassicSyncGroupRequest(
                self.group, self.generation, self.member_id, assignments=plan
            )
        synced = await conn.request(sync, 60)
        self.stable = synced.error_code == E.NONE


def all_stable(members: list[Member], after_generation: int) -> bool:
    generations = {m.generation for m in members}
    return (
        all(m.stable for m in members)
        and len(generations) == 1
        and generations.pop() > after_generation
    )


async def until_stable(members: list[Member], after_generation: int) -> float:
    started = trio.current_time()
    with trio.fail_after(60):
        while not all_stable(members, after_generation):
            await trio.sleep(0.002)
    return (trio.current_time() - started) * 1000


async def one_round(bootstrap: str, group: str, count: int, heartbeat_s: float) -> list[float]:
    members = [Member(bootstrap, group, f"m{i}", heartbeat_s) for i in range(count)]
    async with trio.open_nursery() as nursery:
        for m in members:
            nursery.start_soon(m.run)
        first = await until_stable(members, 0)
        generation = members[0].generation
        leaving, rest = members[0], members[1:]
        leaving.leave.set()
        after_leave = await until_stable(rest, generation)
        newcomer = Member(bootstrap, group, "late", heartbeat_s)
        nursery.start_soon(newcomer.run)
        after_join = await until_stable([*rest, newcomer], rest[0].generation)
        for m in [*rest, newcomer]:
            m.leave.set()
    return [first, after_leave, after_join]


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--members", type=int, default=3)
    p.add_argument("--heartbeat-ms", type=int, default=300)
    args = p.parse_args()
    if args.bootstrap:
        p.error("this bench runs its own cluster; --bootstrap does not apply")
    results: list[list[float]] = []
    heartbeat_s = args.heartbeat_ms / 1000
    with (
        tempfile.TemporaryDirectory(prefix="rillet-classic-bench-") as tmp,
        LocalCluster(plan_cluster(Path(tmp) / "cluster", 3), log_level="WARNING") as cluster,
    ):
        cluster.start()
        for r in range(args.rounds):
            group = f"classic-{r}"
            figures = trio.run(one_round, cluster.bootstrap, group, args.members, heartbeat_s)
            results.append(figures)
            print(
                f"round {r + 1}: first {figures[0]:.0f} ms, after leave {figures[1]:.0f} ms, "
                f"after join {figures[2]:.0f} ms",
                file=sys.stderr,
            )
    names = ["first_generation_ms", "after_leave_ms", "after_join_ms"]
    out: dict[str, object] = {}
    for i, name in enumerate(names):
        values = [row[i] for row in results]
        out[name] = [round(v) for v in values]
        out[f"{name}_median"] = round(statistics.median(values))
    emit("classic_groups", {**vars(args), "nodes": 3}, out)


if __name__ == "__main__":
    main()
