"""The group coordinator's decisions on the metadata state, and on the in-memory quorum with
a controller change in the middle of a rebalance.

Members are simulated as the client behaves: each heartbeat reports what the member owns
and the member then owns exactly what the answer assigns (it releases the rest). After every
applied decision the ownership invariant is checked: no partition has two owners.
"""

from __future__ import annotations

import random

import pytest
import trio
import trio.testing
from sim_quorum import SimCluster

from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.controller_service import ControllerService, DecideFn
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.group_coordinator import MemberHeartbeat, member_assignment
from rillet.metadata_quorum.records import RegisterBroker
from rillet.metadata_quorum.state import MetadataState
from rillet.raft.errors import NotLeaderError, ProposalOutcomeUnknown
from rillet.wire.error_codes import ErrorCode

GROUP = "g"
SESSION_MS = 3000
TP = tuple[str, int]


def check_single_owners(state: MetadataState) -> None:
    for group in state.groups.groups.values():
        seen: dict[TP, str] = {}
        for mid, m in group.members.items():
            for tp in m.owned:
                assert tp not in seen, f"{tp} owned by {seen[tp]} and {mid}"
                seen[tp] = mid


def apply(state: MetadataState, decision: Decision) -> Decision:
    if decision.records:
        state.apply_entry(state.last_applied_index + 1, decision.records)
    check_single_owners(state)
    return decision


def beat(
    member_id: str, owned: frozenset[TP] | None, joining: bool = False, **kw: object
) -> MemberHeartbeat:
    fields: dict[str, object] = {
        "group_id": GROUP,
        "member_id": member_id,
        "joining": joining,
        "client_id": "c",
        "client_host": "h",
        "topics": ("t",),
        "pattern": None,
        "session_timeout_ms": SESSION_MS,
        "assignor": "sticky",
        "instance_id": None,
        "owned": owned,
    }
    fields.update(kw)
    return MemberHeartbeat(**fields)  # type: ignore[arg-type]


class Members:
    """Client-side view of each member: what it owns (it obeys every answer at once)."""

    def __init__(self, ctl: Controller, state: MetadataState) -> None:
        self.ctl, self.state = ctl, state
        self.owned: dict[str, frozenset[TP]] = {}
        self.fields: dict[str, dict[str, object]] = {}  # what each member sends every time

    def join(self, member_id: str, now_ms: int = 0, **kw: object) -> None:
        hb = beat(member_id, None, True, **kw)
        apply(self.state, self.ctl.groups.heartbeat(self.state, hb, now_ms))
        self.owned[member_id] = frozenset()
        self.fields[member_id] = kw
        self.heartbeat(member_id, now_ms)

    def heartbeat(self, member_id: str, now_ms: int = 0) -> Decision:
        hb = beat(member_id, self.owned[member_id], **self.fields.get(member_id, {}))
        decision = apply(self.state, self.ctl.groups.heartbeat(self.state, hb, now_ms))
        answer = member_assignment(self.state, GROUP, member_id)
        if answer is not None:
            self.owned[member_id] = answer.assigned
        return decision

    def settle(self, now_ms: int = 0, rounds: int = 10) -> None:
        for _ in range(rounds):
            for m in sorted(self.owned):
                self.heartbeat(m, now_ms)


def cluster(partitions: int = 12) -> tuple[Controller, MetadataState, str]:
    ctl = Controller(ControllerConfig(), random.Random(1))
    state = MetadataState()
    for b in (1, 2, 3):
        apply(state, ctl.register_broker(state, RegisterBroker(b, f"i{b}", "h", b), 0))
        apply(state, ctl.heartbeat(state, b, state.brokers[b].broker_epoch, True, 0))
    apply(state, ctl.create_topic(state, "t", partitions, 1, {}))
    ctl.on_become_leader(state, 0)
    topic_id = state.topic_ids["t"]
    return ctl, state, topic_id


def test_three_members_share_a_topic_without_overlap() -> None:
    ctl, state, topic_id = cluster()
    members = Members(ctl, state)
    for m in ("a", "b", "c"):
        members.join(m)
    members.settle()
    owned = members.owned
    assert sorted(len(p) for p in owned.values()) == [4, 4, 4]
    assert frozenset().union(*owned.values()) == {(topic_id, p) for p in range(12)}
    answer = member_assignment(state, GROUP, "a")
    assert answer is not None and not answer.converging


def test_a_partition_is_granted_only_after_its_old_owner_released_it() -> None:
    ctl, state, _ = cluster(4)
    members = Members(ctl, state)
    members.join("a")
    members.settle()
    assert len(members.owned["a"]) == 4
    apply(state, ctl.groups.heartbeat(state, beat("b", None, True), 0))
    members.owned["b"] = frozenset()
    members.heartbeat("b")  # b's target has two partitions, but a still owns them
    assert members.owned["b"] == frozenset()
    members.heartbeat("a")  # a is told to keep two: it releases the other two...
    assert len(members.owned["a"]) == 2
    members.heartbeat("a")  # ...and its next heartbeat reports the release
    members.heartbeat("b")
    assert len(members.owned["b"]) == 2 and not members.owned["a"] & members.owned["b"]


def test_leave_and_expiry_move_partitions_to_the_survivors() -> None:
    ctl, state, _ = cluster()
    members = Members(ctl, state)
    for m in ("a", "b", "c"):
        members.join(m)
    members.settle()
    generation = state.groups.groups[GROUP].generation
    apply(state, ctl.groups.leave(state, GROUP, "c"))
    del members.owned["c"]
    members.settle(1000)
    assert sorted(len(p) for p in members.owned.values()) == [6, 6]
    assert state.groups.groups[GROUP].generation > generation
    # b goes silent: its session ends and a takes everything
    for now in range(1000, 1000 + SESSION_MS + 200, 100):
        members.heartbeat("a", now)
        apply(state, ctl.groups.tick(state, now))
    del members.owned["b"]
    members.settle(SESSION_MS + 1200)
    assert len(members.owned["a"]) == 12 and "b" not in state.groups.groups[GROUP].members


def test_an_unknown_member_is_fenced_and_a_bad_session_refused() -> None:
    ctl, state, _ = cluster()
    assert (
        ctl.groups.heartbeat(state, beat("ghost", frozenset()), 0).error
        == ErrorCode.UNKNOWN_MEMBER_ID
    )
    bad = ctl.groups.heartbeat(state, beat("x", None, True, session_timeout_ms=10), 0)
    assert bad.error == ErrorCode.INVALID_SESSION_TIMEOUT


def test_a_join_sent_again_after_its_answer_was_lost_is_the_same_member() -> None:
    """The join committed but its answer never came (the controller changed): the member
    sends it again with the id it made. Before, the coordinator refused the id or, with ids
    made by the coordinator, held a second member's partitions until its session expired."""
    ctl, state, _ = cluster()
    members = Members(ctl, state)
    members.join("a")
    members.settle()
    apply(state, ctl.groups.heartbeat(state, beat("b", None, True), 0))  # answer lost
    generation = state.groups.groups[GROUP].generation
    again = apply(state, ctl.groups.heartbeat(state, beat("b", None, True), 0))
    assert again.error == ErrorCode.NONE
    assert again.records == []  # nothing new: the same member, the same target
    assert state.groups.groups[GROUP].generation == generation
    members.owned["b"] = frozenset()
    members.settle()
    assert sorted(state.groups.groups[GROUP].members) == ["a", "b"]
    assert sorted(len(p) for p in members.owned.values()) == [6, 6]


def test_a_static_member_joining_again_with_its_own_id_stays() -> None:
    ctl, state, _ = cluster()
    members = Members(ctl, state)
    members.join("a", instance_id="host-a")
    members.settle()
    before = members.owned["a"]
    again = apply(
        state, ctl.groups.heartbeat(state, beat("a", None, True, instance_id="host-a"), 0)
    )
    assert again.error == ErrorCode.NONE
    assert "a" in state.groups.groups[GROUP].members
    answer = member_assignment(state, GROUP, "a")
    assert answer is not None and answer.assigned == before


def test_a_member_id_has_a_length_limit() -> None:
    ctl, state, _ = cluster()
    refused = ctl.groups.heartbeat(state, beat("m" * 65, None, True), 0)
    assert refused.error == ErrorCode.INVALID_REQUEST
    assert "64" in refused.message


def test_a_static_member_restarting_keeps_its_partitions() -> None:
    ctl, state, _ = cluster()
    members = Members(ctl, state)
    members.join("a", instance_id="host-a")
    members.join("b", instance_id="host-b")
    members.settle()
    before = members.owned["a"]
    # "a" restarts: a new member id, the same instance id, within the session
    members.join("a2", instance_id="host-a")
    del members.owned["a"]
    members.settle()
    assert members.owned["a2"] == before
    assert "a" not in state.groups.groups[GROUP].members


def test_offset_commits_are_fenced_by_ownership_and_generation() -> None:
    ctl, state, topic_id = cluster(2)
    errors: dict[tuple[str, int], ErrorCode] = {}

    def commit(member: str, generation: int, partition: int, offset: int) -> Decision:
        errors.clear()
        return apply(
            state,
            ctl.groups.commit_offsets(
                state, GROUP, member, generation, [("t", partition, offset, "")], 5, errors
            ),
        )

    assert commit("", -1, 0, 10).error == ErrorCode.NONE  # an empty group: tools may commit
    members = Members(ctl, state)
    members.join("a")
    members.join("b")
    members.settle()
    owner = {tp[1]: m for m, parts in members.owned.items() for tp in parts}
    generation = state.groups.groups[GROUP].generation
    assert commit("", -1, 0, 11).error == ErrorCode.UNKNOWN_MEMBER_ID
    other = "b" if owner[0] == "a" else "a"
    commit(other, generation, 0, 12)
    assert errors == {("t", 0): ErrorCode.ILLEGAL_GENERATION}
    assert commit(owner[0], 0, 0, 13).error == ErrorCode.ILLEGAL_GENERATION  # stale
    assert commit(owner[0], generation, 0, 14).error == ErrorCode.NONE and not errors
    assert state.groups.offsets[GROUP][(topic_id, 0)].offset == 14
    apply(state, ctl.delete_topic(state, "t"))
    assert state.groups.offsets[GROUP] == {}


def test_a_new_topic_matching_a_pattern_is_assigned_on_the_next_tick() -> None:
    ctl, state, _ = cluster(2)
    members = Members(ctl, state)
    members.join("a", topics=(), pattern="t.*")
    members.settle()
    assert len(members.owned["a"]) == 2
    apply(state, ctl.create_topic(state, "tx", 3, 1, {}))
    apply(state, ctl.groups.tick(state, 1000))  # within the session: a stays
    members.settle()
    assert len(members.owned["a"]) == 5


def test_snapshot_keeps_the_group_registries() -> None:
    ctl, state, _ = cluster()
    members = Members(ctl, state)
    for m in ("a", "b"):
        members.join(m)
    members.settle()
    errors: dict[tuple[str, int], ErrorCode] = {}
    owned_by_a = sorted(members.owned["a"])[0][1]
    apply(
        state,
        ctl.groups.commit_offsets(state, GROUP, "a", 99, [("t", owned_by_a, 7, "m")], 1, errors),
    )
    restored = MetadataState.from_snapshot(state.to_snapshot())
    assert restored.to_snapshot() == state.to_snapshot()
    assert restored.groups.groups[GROUP].members["a"].owned == members.owned["a"]


# -- on the in-memory quorum, with the controller moving mid-rebalance ---------------------


def now_ms() -> int:
    return int(trio.current_time() * 1000)


@pytest.mark.parametrize("seed", range(5))
async def test_a_group_converges_under_a_new_controller_and_offsets_never_go_back(
    seed: int, autojump_clock: trio.testing.MockClock
) -> None:
    sim = SimCluster([1, 2, 3], random.Random(seed), commit_delay_s=0.005)
    services: dict[int, tuple[MetadataFollower, ControllerService]] = {}
    highest: dict[tuple[int, str, int], int] = {}
    async with trio.open_nursery() as nursery:
        for node_id, quorum in sim.members.items():
            follower = MetadataFollower(quorum)
            service = ControllerService(
                quorum, follower, ControllerConfig(), random.Random(seed), now_ms, 100
            )
            services[node_id] = (follower, service)
            nursery.start_soon(follower.run)
            nursery.start_soon(service.run)

        async def call(decide: DecideFn) -> Decision:
            with trio.fail_after(60):
                while True:
                    for _, service in services.values():
                        if service.active:
                            try:
                                return await service.submit(decide)
                            except (NotLeaderError, ProposalOutcomeUnknown):
                                pass
                    await trio.sleep(0.05)

        def any_state() -> MetadataState:
            for follower, service in services.values():
                if service.active:
                    return follower.state
            return services[1][0].state

        for b in (1, 2, 3):
            await call(
                lambda c, s, n, b=b: c.register_broker(s, RegisterBroker(b, f"i{b}", "h", b), n)
            )
            await call(lambda c, s, n, b=b: c.heartbeat(s, b, s.brokers[b].broker_epoch, True, n))
        await call(lambda c, s, n: c.create_topic(s, "t", 12, 1, {}))
        owned: dict[str, frozenset[TP]] = {}
        stop = trio.Event()

        async def member(member_id: str) -> None:
            owned[member_id] = frozenset()
            joining = True
            while not stop.is_set():
                hb = beat(member_id, None if joining else owned[member_id], joining)
                await call(lambda c, s, n, hb=hb: c.groups.heartbeat(s, hb, n))
                joining = False
                state = any_state()
                answer = member_assignment(state, GROUP, member_id)
                if answer is not None:
                    owned[member_id] = answer.assigned
                    table = state.groups.offsets.get(GROUP, {})
                    progress = [  # consume one record of each owned partition, commit it
                        ("t", p, (table[(t, p)].offset if (t, p) in table else 0) + 1, "")
                        for t, p in sorted(answer.assigned)
                    ]
                    if progress:
                        errs: dict[tuple[str, int], ErrorCode] = {}
                        await call(
                            lambda c, s, n, b=progress, g=answer.generation, e=errs: (
                                c.groups.commit_offsets(s, GROUP, member_id, g, b, n, e)
                            )
                        )
                for node_id, (follower, _) in services.items():
                    check_single_owners(follower.state)
                    for key, entry in follower.state.groups.offsets.get(GROUP, {}).items():
                        seen = highest.get((node_id, *key), 0)
                        assert entry.offset >= seen, f"seed {seed}: {key} went back on {node_id}"
                        highest[(node_id, *key)] = entry.offset
                await trio.sleep(0.2)

        async with trio.open_nursery() as group:
            for m in ("a", "b", "c"):
                group.start_soon(member, m)
            await trio.sleep(1)
            group.start_soon(member, "d")  # a rebalance starts...
            await trio.sleep(0.3)
            sim.elect(2)  # ...and the controller moves in the middle of it
            await trio.sleep(3)
            stop.set()
        state = services[2][0].state
        g = state.groups.groups[GROUP]
        check_single_owners(state)
        sizes = sorted(len(m.owned) for m in g.members.values())
        assert sizes == [3, 3, 3, 3], f"seed {seed}: {sizes}"
        assert services[2][1].active
        nursery.cancel_scope.cancel()


def test_a_lost_connection_expires_a_dynamic_member_soon_and_a_static_one_not() -> None:
    ctl, state, _ = cluster()
    members = Members(ctl, state)
    members.join("dyn")
    members.join("stat", instance_id="host-s")
    members.settle()
    ctl.groups.connection_lost(state, GROUP, "dyn", 100)
    ctl.groups.connection_lost(state, GROUP, "stat", 100)
    apply(state, ctl.groups.tick(state, 700))  # past the grace, within the session
    assert set(state.groups.groups[GROUP].members) == {"stat"}
