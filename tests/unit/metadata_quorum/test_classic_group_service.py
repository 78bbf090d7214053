"""Held classic-group requests through the controller service on the in-memory quorum: an
answer leaves only once the records it announces are applied, a round ended by another
member's join or by a tick answers every held join, and a change of controller answers
every held request NOT_COORDINATOR, after which the next controller finishes the round."""

from __future__ import annotations

import random
from typing import Any

import trio
import trio.testing
from sim_quorum import SimCluster

from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.controller_service import ControllerService
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.group_coordinator import MemberHeartbeat
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import classic_group_messages as cgm
from rillet.wire.error_codes import ErrorCode

GROUP = "g"


def now_ms() -> int:
    return int(trio.current_time() * 1000)


def join_request(member_id: str, subscription: bytes) -> cgm.ClassicJoinGroupRequest:
    protocols = [cgm.ClassicProtocol("range", subscription)]
    return cgm.ClassicJoinGroupRequest(GROUP, 10_000, 5_000, member_id, None, "consumer", protocols)


class Node:
    def __init__(self, follower: MetadataFollower, service: ControllerService) -> None:
        self.follower, self.service = follower, service
        self.ids = 0

    async def join(
        self, member_id: str, seen: dict[str, int] | None = None, subscription: bytes = b"s"
    ) -> Any:
        """A JoinGroup as the handler runs it: open a ticket, decide, wait for the answer."""
        board = self.service.classic_answers
        ticket = board.open()
        self.ids += 1
        new_id = f"n{self.service.terms_led[-1]}-{self.ids}"
        try:
            await self.service.submit(
                lambda ctl, s, now: ctl.classic_groups.join(
                    s, join_request(member_id, subscription), ticket, new_id, now
                )
            )
            answer = await board.wait(ticket, 60)
            if seen is not None:  # what this node had applied when the answer arrived
                group = self.follower.state.classic_groups.group(GROUP)
                seen["generation"] = group.generation if group is not None else 0
            return answer
        finally:
            board.close(ticket)


async def test_held_joins_are_answered_after_commit_and_across_a_controller_change(
    autojump_clock: trio.testing.MockClock,
) -> None:
    sim = SimCluster([1, 2, 3], random.Random(3), commit_delay_s=0.005)
    nodes: dict[int, Node] = {}
    async with trio.open_nursery() as nursery:
        for node_id, quorum in sim.members.items():
            follower = MetadataFollower(quorum)
            service = ControllerService(
                quorum, follower, ControllerConfig(), random.Random(node_id), now_ms, 100
            )
            nodes[node_id] = Node(follower, service)
            nursery.start_soon(follower.run)
            nursery.start_soon(service.run)
        with trio.fail_after(30):
            while not nodes[1].service.active:
                await trio.sleep(0.05)
        one = nodes[1]
        first = await one.join("")
        assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
        seen: dict[str, int] = {}
        a = await one.join(first.member_id, seen)
        assert (a.error_code, a.generation_id) == (ErrorCode.NONE, 1)
        assert seen["generation"] == 1  # the answer left after the record was applied

        # A newcomer's join is held; the old member's rejoin ends the round for both.
        answers: dict[str, Any] = {}
        seen_by: dict[str, dict[str, int]] = {}

        async def join_into(key: str, node: Node, member_id: str, sub: bytes = b"s") -> None:
            seen_by[key] = {}
            answers[key] = await node.join(member_id, seen_by[key], sub)

        newcomer = (await one.join("")).member_id
        async with trio.open_nursery() as round_two:
            round_two.start_soon(join_into, "b", one, newcomer)
            await trio.sleep(0.5)
            assert "b" not in answers
            round_two.start_soon(join_into, "a", one, a.member_id)
        assert answers["a"].generation_id == answers["b"].generation_id == 2
        assert seen_by["b"]["generation"] == 2  # B's answer, released by A's join, too

        # B's subscription changes: another round, and the controller moves while B's join
        # is held.
        answers.clear()
        async with trio.open_nursery() as round_three:
            round_three.start_soon(join_into, "b", one, newcomer, b"v3")
            await trio.sleep(0.5)
            sim.elect(2)
        assert answers["b"].error_code == ErrorCode.NOT_COORDINATOR
        two = nodes[2]
        with trio.fail_after(30):
            while not two.service.active:
                await trio.sleep(0.05)
        group = two.follower.state.classic_groups.group(GROUP)
        assert group is not None and group.phase == cgm.PREPARING_REBALANCE
        answers.clear()
        async with trio.open_nursery() as round_three_again:
            round_three_again.start_soon(join_into, "b", two, newcomer, b"v3")
            await trio.sleep(0.5)
            assert "b" not in answers
            round_three_again.start_soon(join_into, "a", two, a.member_id)
        assert answers["a"].generation_id == answers["b"].generation_id == 3
        assert len(one.service.classic_answers) == len(two.service.classic_answers) == 0

        # B's subscription changes: a round A never joins ends at its rebalance timeout (a
        # controller tick), without A.
        async with trio.open_nursery() as round_four:
            round_four.start_soon(join_into, "b", two, newcomer, b"changed")
        assert answers["b"].generation_id == 4
        assert [m.member_id for m in answers["b"].members] == [newcomer]
        nursery.cancel_scope.cancel()


def test_a_classic_round_ends_in_a_tick_that_also_expires_a_consumer_protocol_member() -> None:
    ctl = Controller(ControllerConfig(), random.Random(1))
    state = MetadataState()
    ctl.on_become_leader(state, 0)

    def commit(decision: Decision) -> None:
        if decision.records:
            state.apply_entry(state.last_applied_index + 1, decision.records)

    kip = MemberHeartbeat("kip", "k1", True, "c", "h", ("t",), None, 1_000, "sticky", None, None)
    commit(ctl.groups.heartbeat(state, kip, 0))
    slow = cgm.ClassicJoinGroupRequest(
        GROUP,
        60_000,
        1_000,
        "",
        None,
        "consumer",
        [cgm.ClassicProtocol("range", b"")],
        require_known_member_id=False,
    )
    commit(ctl.classic_groups.join(state, slow, 1, "slow", 0))
    commit(ctl.classic_groups.join(state, slow, 2, "new", 0))  # a round "slow" never rejoins
    ctl.classic_groups.take_answers()
    commit(ctl.tick(state, 1_000))  # k1's session and the classic round end together
    assert "k1" not in state.groups.groups["kip"].members
    answers = dict(ctl.classic_groups.take_answers())
    assert answers[2].generation_id == 2 and [m.member_id for m in answers[2].members] == ["new"]
