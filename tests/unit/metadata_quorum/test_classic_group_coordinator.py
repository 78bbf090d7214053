"""The classic (JoinGroup/SyncGroup) group state machine, driven deterministically: time is
an argument, member ids come from the harness, every decision's records are applied before
its answers are read (as the controller service does)."""

from __future__ import annotations

from classic_group_harness import GROUP, Harness

from rillet.metadata_quorum.classic_group_protocol import ClassicGroupConfig
from rillet.metadata_quorum.classic_group_records import ClassicRebalanceStarted
from rillet.metadata_quorum.group_records import GroupMember
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import classic_group_messages as cgm
from rillet.wire.error_codes import ErrorCode

E = ErrorCode


def test_two_step_join_then_the_lone_leader_assigns_and_syncs() -> None:
    h = Harness()
    first = h.answers[h.join("")]
    assert first.error_code == E.MEMBER_ID_REQUIRED and first.member_id == "m1"
    assert h.group() is None  # a pending member id is not recorded
    answer = h.answers[h.join("m1")]
    assert answer.error_code == E.NONE
    assert (answer.generation_id, answer.leader_id, answer.member_id) == (1, "m1", "m1")
    assert (answer.protocol_type, answer.protocol_name) == ("consumer", "range")
    assert answer.members == [cgm.ClassicJoinedMember("m1", None, b"sub")]
    assert h.group().phase == cgm.COMPLETING_REBALANCE
    synced = h.answers[h.sync("m1", 1, {"m1": b"a1"})]
    assert (synced.error_code, synced.assignment, synced.protocol_name) == (0, b"a1", "range")
    assert h.group().phase == cgm.STABLE
    assert h.heartbeat("m1", 1) == E.NONE


def test_members_starting_together_share_the_first_generation() -> None:
    h = Harness()
    a = h.answers[h.join("")].member_id
    b = h.answers[h.join("")].member_id
    held_a = h.join(a)
    assert held_a not in h.answers  # b's member id is out: b is on its way in
    held_b = h.join(b)
    assert h.answers[held_a].generation_id == h.answers[held_b].generation_id == 1
    c = h.answers[h.join("")].member_id
    held_a = h.join(a, protocols=[("range", b"new")])  # a round while c is on its way
    held_b = h.join(b)
    assert held_a not in h.answers and held_b not in h.answers
    h.leave((c, None))  # c gives up: the round need not wait for it
    assert h.answers[held_a].generation_id == h.answers[held_b].generation_id == 2


def test_join_without_member_id_requirement_joins_at_once() -> None:
    h = Harness()
    answer = h.answers[h.join("", require_known=False)]
    assert answer.error_code == E.NONE and answer.member_id == "m1"


def test_a_new_member_starts_a_rebalance_and_the_leader_gets_every_subscription() -> None:
    h = Harness()
    (m1,) = h.stable_group(b"a1")
    m2, held = h.join_new(protocols=[("range", b"sub2")])
    assert held not in h.answers  # held until m1 rejoins
    assert h.group().phase == cgm.PREPARING_REBALANCE
    assert any(isinstance(r, ClassicRebalanceStarted) for r in h.records)
    assert h.heartbeat(m1, 1) == E.REBALANCE_IN_PROGRESS
    leader_ticket = h.join(m1)
    leader, follower = h.answers[leader_ticket], h.answers[held]
    assert leader.generation_id == follower.generation_id == 2
    assert leader.leader_id == follower.leader_id == m1  # the old leader stays leader
    assert [(m.member_id, m.metadata) for m in leader.members] == [(m2, b"sub2"), (m1, b"sub")]
    assert follower.members == []
    follower_sync = h.sync(m2, 2)
    assert follower_sync not in h.answers  # waits for the leader's assignment
    leader_sync = h.sync(m1, 2, {m1: b"x", m2: b"y"})
    assert h.answers[leader_sync].assignment == b"x"
    assert h.answers[follower_sync].assignment == b"y"
    assert h.group().phase == cgm.STABLE


def test_the_leader_sends_no_assignment_for_a_member_it_forgot() -> None:
    h = Harness()
    m1, m2 = h.stable_group(b"a", b"b")
    h.join(m1, protocols=[("range", b"more")])  # the leader's subscription changed: a round
    h.join(m2)
    follower = h.sync(m2, 3)
    h.sync(m1, 3, {m1: b"all"})
    assert h.answers[follower].error_code == E.NONE and h.answers[follower].assignment == b""


def test_an_unchanged_leader_rejoin_gets_the_generation_in_force() -> None:
    """A Kafka client that stopped waiting for its join (kafka-python polled with a short
    timeout) joins again when its answer comes too late: the leader gets the generation in
    force with every subscription, and its unchanged assignment keeps the group Stable."""
    h = Harness()
    m1, m2 = h.stable_group(b"a", b"b")
    again = h.answers[h.join(m1)]
    assert (again.error_code, again.generation_id, again.leader_id) == (E.NONE, 2, m1)
    assert sorted(m.member_id for m in again.members) == sorted([m1, m2])
    assert h.group().phase == cgm.STABLE and not h.group().rebalancing
    synced = h.answers[h.sync(m1, 2, {m1: b"a", m2: b"b"})]
    assert (synced.error_code, synced.assignment) == (E.NONE, b"a")
    assert h.heartbeat(m2, 2) == E.NONE
    assert h.group().generation == 2


def test_a_stable_leader_that_assigns_anew_starts_a_rebalance() -> None:
    """Kafka's leader rejoins to reassign after a metadata change (partitions added): its new
    assignment sends everyone through a new round."""
    h = Harness()
    m1, m2 = h.stable_group(b"a", b"b")
    h.join(m1)
    synced = h.answers[h.sync(m1, 2, {m1: b"a+", m2: b"b+"})]
    assert synced.error_code == E.REBALANCE_IN_PROGRESS
    assert h.group().phase == cgm.PREPARING_REBALANCE
    assert h.heartbeat(m2, 2) == E.REBALANCE_IN_PROGRESS
    held = h.join(m1)
    answer = h.answers[h.join(m2)]
    assert answer.generation_id == h.answers[held].generation_id == 3


def test_a_leave_rebalances_the_rest() -> None:
    h = Harness()
    m1, m2 = h.stable_group(b"a", b"b")
    left = h.leave((m2, None))
    assert left.error_code == E.NONE and left.members[0].error_code == E.NONE
    assert h.heartbeat(m1, 2) == E.REBALANCE_IN_PROGRESS
    answer = h.answers[h.join(m1)]
    assert (answer.generation_id, answer.leader_id) == (3, m1)
    assert [m.member_id for m in answer.members] == [m1]
    assert h.leave(("nobody", None)).members[0].error_code == E.UNKNOWN_MEMBER_ID


def test_the_last_member_leaving_empties_the_group() -> None:
    h = Harness()
    (m1,) = h.stable_group(b"a")
    h.leave((m1, None))
    g = h.group()
    assert g.phase == cgm.EMPTY and g.generation == 2 and not g.members


def test_a_member_that_misses_its_session_is_removed() -> None:
    h = Harness()
    m1, m2 = h.stable_group(b"a", b"b")
    for now in (2_500, 5_000, 7_500, 9_999):
        assert h.heartbeat(m1, 2, now=now) == E.NONE
        h.tick(now)
    assert h.group().phase == cgm.STABLE  # m2's session (10 s from its sync at 0) ends at 10 s
    h.tick(10_000)
    assert m2 not in h.group().members
    assert h.heartbeat(m1, 2, now=10_001) == E.REBALANCE_IN_PROGRESS


def test_the_rebalance_timeout_drops_members_that_did_not_rejoin() -> None:
    h = Harness()
    m1, m2 = h.stable_group(b"a", b"b")
    # m2 changes its subscription: a rebalance m1 never joins, though it keeps heartbeating
    held = h.join(m2, now=1_000, protocols=[("range", b"changed")])
    for now in range(5_000, 30_001, 5_000):
        assert h.heartbeat(m1, 2, now=now) == E.REBALANCE_IN_PROGRESS
        h.tick(now)
    assert held not in h.answers
    h.tick(31_000)  # the round started at 1 s with a 30 s rebalance timeout
    answer = h.answers[held]
    assert (answer.generation_id, answer.leader_id) == (3, m2)
    assert [m.member_id for m in answer.members] == [m2]
    assert h.heartbeat(m1, 2, now=31_001) == E.UNKNOWN_MEMBER_ID


def test_generations_fence_heartbeats_syncs_and_joins() -> None:
    h = Harness()
    m1, m2 = h.stable_group(b"a", b"b")
    assert h.heartbeat(m1, 1) == E.ILLEGAL_GENERATION
    assert h.answers[h.sync(m2, 1)].error_code == E.ILLEGAL_GENERATION
    assert h.heartbeat("ghost", 2) == E.UNKNOWN_MEMBER_ID
    assert h.answers[h.join("ghost")].error_code == E.UNKNOWN_MEMBER_ID
    assert h.heartbeat(m1, 2, instance="not-mine") == E.NONE  # an unknown instance id
    unknown_instance = h.answers[h.join(m1, instance="not-known")]
    assert unknown_instance.error_code == E.UNKNOWN_MEMBER_ID


def test_a_follower_rejoin_without_change_gets_the_generation_in_force() -> None:
    h = Harness()
    m1, m2 = h.stable_group(b"a", b"b")
    leader = h.group().leader_id
    follower = m2 if leader == m1 else m1
    answer = h.answers[h.join(follower)]
    assert (answer.error_code, answer.generation_id, answer.members) == (0, 2, [])
    assert h.group().phase == cgm.STABLE


def test_static_member_rejoins_under_a_new_id_without_a_rebalance() -> None:
    h = Harness()
    first = h.answers[h.join("", instance="i1")]  # static: no MEMBER_ID_REQUIRED step
    old = first.member_id
    assert first.error_code == E.NONE and first.leader_id == old
    h.sync(old, 1, {old: b"mine"})
    restarted = h.answers[h.join("", instance="i1", now=5_000)]
    new = restarted.member_id
    assert restarted.error_code == E.NONE and new != old
    assert restarted.generation_id == 1  # no new generation
    assert restarted.leader_id == old  # so the new member does not run an assignment
    assert restarted.members == []
    assert h.group().phase == cgm.STABLE and h.group().leader_id == new
    assert h.answers[h.sync(new, 1, instance="i1")].assignment == b"mine"
    assert h.heartbeat(old, 1, instance="i1") == E.FENCED_INSTANCE_ID
    assert h.heartbeat(old, 1) == E.UNKNOWN_MEMBER_ID
    assert h.answers[h.join(old, instance="i1")].error_code == E.FENCED_INSTANCE_ID
    # a restart with different subscriptions is a rebalance
    changed = h.answers[h.join("", instance="i1", protocols=[("range", b"other")])]
    assert changed.error_code == E.NONE and changed.generation_id == 2


def test_a_static_member_that_misses_a_round_is_kept_with_its_last_subscription() -> None:
    h = Harness()
    s = h.answers[h.join("", instance="i1", session_ms=60_000)].member_id
    h.sync(s, 1, {s: b"s"})
    d, held = h.join_new()
    h.tick(31_000)  # s (alive: its session is 60 s) never rejoins the round d started
    answer = h.answers[held]
    assert answer.leader_id == d
    assert sorted(m.member_id for m in answer.members) == sorted([d, s])
    assert h.leave(("", "i1")).members[0].error_code == E.NONE  # removal by instance id
    assert s not in h.group().members


def test_protocol_selection_and_inconsistent_protocols() -> None:
    h = Harness()
    a, held_a = h.join_new(protocols=[("range", b""), ("roundrobin", b"")])
    assert h.answers[held_a].protocol_name == "range"
    h.sync(a, 1, {})
    b, held_b = h.join_new(protocols=[("roundrobin", b"rr"), ("range", b"")])
    _, held_c = h.join_new(protocols=[("roundrobin", b"rr")])
    answer = h.answers[h.join(a, protocols=[("range", b""), ("roundrobin", b"")])]
    assert answer.protocol_name == "roundrobin"  # the only one all three support
    assert h.answers[held_c].protocol_name == "roundrobin"
    bad = h.answers[h.join("", protocols=[("sticky", b"")])]
    assert bad.error_code == E.INCONSISTENT_GROUP_PROTOCOL
    other_type = h.answers[h.join("", protocol_type="connect", protocols=[("roundrobin", b"")])]
    assert other_type.error_code == E.INCONSISTENT_GROUP_PROTOCOL
    none = h.answers[h.join("", protocols=[], group="fresh")]
    assert none.error_code == E.INCONSISTENT_GROUP_PROTOCOL
    assert b and h.answers[held_b].error_code == E.NONE


def test_bad_joins_are_refused() -> None:
    h = Harness()
    assert h.answers[h.join("", group="")].error_code == E.INVALID_GROUP_ID
    assert h.answers[h.join("", session_ms=10)].error_code == E.INVALID_SESSION_TIMEOUT
    assert h.answers[h.join("", rebalance_ms=0)].error_code == E.INVALID_REQUEST
    assert h.answers[h.join("", rebalance_ms=2**31)].error_code == E.INVALID_REQUEST
    dup = [("range", b""), ("range", b"")]
    assert h.answers[h.join("", protocols=dup)].error_code == E.INVALID_REQUEST


def test_a_consumer_protocol_group_refuses_classic_joins() -> None:
    h = Harness()
    member = GroupMember(GROUP, "k1", "c", "h", ["t"], None, 10_000, "sticky")
    h.state.apply_entry(h.state.last_applied_index + 1, [member])
    answer = h.answers[h.join("")]
    assert answer.error_code == E.INCONSISTENT_GROUP_PROTOCOL


def test_the_group_size_is_bounded_and_pending_ids_expire() -> None:
    h = Harness(ClassicGroupConfig(max_size=2))
    h.join("")
    h.join("")
    assert h.answers[h.join("")].error_code == E.GROUP_MAX_SIZE_REACHED
    h.tick(10_001)  # both pending member ids expire unused
    assert h.answers[h.join("m1", now=10_002)].error_code == E.UNKNOWN_MEMBER_ID
    assert h.answers[h.join("", now=10_002)].error_code == E.MEMBER_ID_REQUIRED


def test_the_initial_rebalance_delay_waits_for_more_members() -> None:
    h = Harness(ClassicGroupConfig(initial_rebalance_delay_ms=3_000))
    m1, held1 = h.join_new(now=0)
    m2, held2 = h.join_new(now=1_000)
    h.tick(2_000)
    assert held1 not in h.answers and held2 not in h.answers
    h.tick(4_000)  # 3 s after the last newcomer
    assert h.answers[held1].generation_id == h.answers[held2].generation_id == 1
    assert {m.member_id for m in h.answers[held1].members} == {m1, m2}


def test_a_leader_that_never_syncs_is_removed_after_the_rebalance_timeout() -> None:
    h = Harness()
    m1, held1 = h.join_new()
    m2, held2 = h.join_new(now=10)
    h.join(m1, now=10)
    leader = h.answers[held1].leader_id
    follower = m2 if leader == m1 else m1
    waiting = h.sync(follower, h.answers[held2].generation_id, now=20)
    h.heartbeat(follower, 2, now=5_000)
    h.tick(30_011)
    assert h.answers[waiting].error_code == E.REBALANCE_IN_PROGRESS
    assert leader not in h.group().members
    assert h.group().phase == cgm.PREPARING_REBALANCE


def test_a_new_coordinator_continues_a_rebalance_from_the_records() -> None:
    h = Harness()
    m1, m2 = h.stable_group(b"a", b"b")
    m3, held3 = h.join_new()
    held1 = h.join(m1)
    # The controller moves: its held joins are failed, clients find the next one and re-send.
    h.collect(h.coord.abandon())
    assert h.answers[held1].error_code == h.answers[held3].error_code == E.NOT_COORDINATOR
    restored = MetadataState.from_snapshot(h.state.to_snapshot())
    assert restored.to_snapshot() == h.state.to_snapshot()
    h2 = Harness(state=restored)
    h2._ids = 100
    assert h2.group().phase == cgm.PREPARING_REBALANCE
    assert h2.heartbeat(m2, 2, now=50) == E.REBALANCE_IN_PROGRESS
    lost = h2.answers[h2.join(m3, now=100)]  # its id was only pending on the old controller
    assert lost.error_code == E.UNKNOWN_MEMBER_ID
    _, held3b = h2.join_new(now=100)
    tickets = [h2.join(m, now=100) for m in (m1, m2)]
    answers = [h2.answers[t] for t in (*tickets, held3b)]
    assert {a.generation_id for a in answers} == {3}
    leader = answers[0].leader_id
    assert leader == m1 and len(answers[0].members) == 3


def test_a_new_coordinator_takes_the_leaders_sync() -> None:
    h = Harness()
    m1, held1 = h.join_new()
    m2, held2 = h.join_new()
    h.join(m1)
    gen = h.answers[held2].generation_id
    assert h.answers[held1].generation_id == 1 and gen == 2
    h2 = Harness(state=MetadataState.from_snapshot(h.state.to_snapshot()))
    follower_sync = h2.sync(m2, gen)
    h2.sync(m1, gen, {m1: b"1", m2: b"2"})
    assert h2.answers[follower_sync].assignment == b"2"


def test_answers_of_a_decision_that_was_not_committed_are_never_sent() -> None:
    h = Harness()
    m1, _ = h.join_new()
    t = h.ticket()
    decision = h.coord.sync(
        h.state, cgm.ClassicSyncGroupRequest(GROUP, 1, m1, assignments=[]), t, 0
    )
    assert decision.records  # the assignment, not applied: the proposal failed
    h.collect(h.coord.abandon())
    assert h.answers[t].error_code == E.NOT_COORDINATOR
    assert h.group().phase == cgm.COMPLETING_REBALANCE


def test_a_runtime_out_of_step_with_the_committed_state_starts_over() -> None:
    h = Harness()
    m1, _ = h.join_new()
    h.sync(m1, 1, {m1: b"x"})
    _, held = h.join_new()
    # The RebalanceStarted record of that join was lost (not committed): undo it.
    h.state = MetadataState()
    for i, record in enumerate(h.records[:-1], start=1):
        h.state.apply_entry(i, [record])
    h.coord._groups[GROUP].rebalancing = True  # what the coordinator believed
    assert h.heartbeat(m1, 1, now=10) == E.NONE
    assert h.answers[held].error_code == E.NOT_COORDINATOR  # failed: the client re-sends
    assert GROUP not in {g for g in h.state.groups.groups}


def test_every_prefix_of_a_removal_leaves_the_group_rebalancing() -> None:
    h = Harness()
    m1, m2 = h.stable_group(b"a", b"b")
    before = MetadataState.from_snapshot(h.state.to_snapshot())
    t = h.ticket()
    req = cgm.ClassicLeaveGroupRequest(GROUP, [cgm.ClassicLeavingMember(m2)])
    decision = h.coord.leave(h.state, req, t, 0)
    for cut in range(1, len(decision.records) + 1):
        state = MetadataState.from_snapshot(before.to_snapshot())
        state.apply_entry(state.last_applied_index + 1, decision.records[:cut])
        g = state.classic_groups.group(GROUP)
        assert g is not None and g.phase == cgm.PREPARING_REBALANCE, (cut, decision.records)
    assert m1 in h.group().members
