"""Classic consumer groups (handlers/classic_groups.py): JoinGroup, SyncGroup, Heartbeat and
LeaveGroup held until the coordinator's answer is committed, and the Kafka-shaped
DescribeGroups / ListGroups from the committed state; elsewhere than the controller every
change is NOT_COORDINATOR."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from broker_context import middle
from voter_context import Voter, answer, voter

from rillet.broker.handlers.classic_groups import (
    handle_classic_describe_groups,
    handle_classic_heartbeat,
    handle_classic_leave,
    handle_classic_list_groups,
    handle_join_group,
    handle_sync_group,
)
from rillet.wire import classic_group_messages as cgm
from rillet.wire.error_codes import ErrorCode

PROTOCOLS = [cgm.ClassicProtocol("range", b"subscription")]


def join_request(member_id: str = "") -> cgm.ClassicJoinGroupRequest:
    return cgm.ClassicJoinGroupRequest(
        "g", 10_000, 20_000, member_id, None, "consumer", PROTOCOLS, "app", "10.0.0.9"
    )


async def stable_leader(v: Voter) -> cgm.ClassicJoinGroupResponse:
    """One member joins (asked for a member id first, as Kafka does) and syncs as leader."""
    asked = await answer(handle_join_group(v.ctx, join_request()))
    assert asked.error_code == ErrorCode.MEMBER_ID_REQUIRED and asked.member_id
    joined: cgm.ClassicJoinGroupResponse = await answer(
        handle_join_group(v.ctx, join_request(asked.member_id))
    )
    assert joined.error_code == ErrorCode.NONE
    assert joined.leader_id == joined.member_id == asked.member_id
    assert [m.metadata for m in joined.members] == [b"subscription"]
    assert joined.protocol_name == "range"
    assignment = [cgm.ClassicMemberAssignment(joined.member_id, b"t-0,t-1")]
    synced = await answer(
        handle_sync_group(
            v.ctx,
            cgm.ClassicSyncGroupRequest("g", joined.generation_id, joined.member_id, None,
                                        "consumer", "range", assignment),
        )
    )  # fmt: skip
    assert (synced.error_code, synced.assignment) == (ErrorCode.NONE, b"t-0,t-1")
    return joined


async def test_join_sync_and_heartbeat_with_the_generation_and_a_stale_one(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        joined = await stable_leader(v)
        member, generation = joined.member_id, joined.generation_id
        beat = await answer(
            handle_classic_heartbeat(v.ctx, cgm.ClassicHeartbeatRequest("g", generation, member))
        )
        assert beat.error_code == ErrorCode.NONE
        stale = await answer(
            handle_classic_heartbeat(
                v.ctx, cgm.ClassicHeartbeatRequest("g", generation - 1, member)
            )
        )
        assert stale.error_code == ErrorCode.ILLEGAL_GENERATION
        stranger = await answer(
            handle_classic_heartbeat(v.ctx, cgm.ClassicHeartbeatRequest("g", generation, "x"))
        )
        assert stranger.error_code == ErrorCode.UNKNOWN_MEMBER_ID
        wrong_sync = await answer(
            handle_sync_group(v.ctx, cgm.ClassicSyncGroupRequest("g", generation + 1, member))
        )
        assert wrong_sync.error_code == ErrorCode.ILLEGAL_GENERATION


async def test_describe_and_list_show_the_groups_phase_and_leave_empties_it(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        joined = await stable_leader(v)
        described = handle_classic_describe_groups(
            v.ctx, cgm.ClassicDescribeGroupsRequest(["g", "unknown"])
        )
        g, unknown = described.groups
        assert (g.error_code, g.group_state, g.protocol_type, g.protocol_data) == (
            ErrorCode.NONE,
            cgm.STABLE,
            "consumer",
            "range",
        )
        assert [(m.member_id, m.client_host, m.member_metadata, m.member_assignment)
                for m in g.members] == [
            (joined.member_id, "10.0.0.9", b"subscription", b"t-0,t-1")
        ]  # fmt: skip
        assert (unknown.error_code, unknown.group_state) == (ErrorCode.NONE, cgm.DEAD)
        listed = handle_classic_list_groups(v.ctx, cgm.ClassicListGroupsRequest())
        assert [(x.group_id, x.group_state) for x in listed.groups] == [("g", cgm.STABLE)]
        empty_only = handle_classic_list_groups(v.ctx, cgm.ClassicListGroupsRequest(["empty"]))
        assert empty_only.groups == []
        left = await answer(
            handle_classic_leave(
                v.ctx,
                cgm.ClassicLeaveGroupRequest(
                    "g", [cgm.ClassicLeavingMember(joined.member_id), cgm.ClassicLeavingMember("x")]
                ),
            )
        )
        assert left.error_code == ErrorCode.NONE
        assert [(m.member_id, m.error_code) for m in left.members] == [
            (joined.member_id, ErrorCode.NONE),
            ("x", ErrorCode.UNKNOWN_MEMBER_ID),
        ]
        after = handle_classic_describe_groups(v.ctx, cgm.ClassicDescribeGroupsRequest(["g"]))
        assert (after.groups[0].group_state, after.groups[0].members) == (cgm.EMPTY, [])


async def test_a_node_that_is_not_the_controller_is_not_the_coordinator(tmp_path: Path) -> None:
    ctx = middle(tmp_path).ctx
    answers = [
        handle_join_group(ctx, join_request()),
        handle_sync_group(ctx, cgm.ClassicSyncGroupRequest("g", 1, "m")),
        handle_classic_heartbeat(ctx, cgm.ClassicHeartbeatRequest("g", 1, "m")),
        handle_classic_leave(
            ctx, cgm.ClassicLeaveGroupRequest("g", [cgm.ClassicLeavingMember("m")])
        ),
    ]
    assert [a.error_code for a in answers] == [ErrorCode.NOT_COORDINATOR] * 4  # type: ignore[union-attr]
    listed = handle_classic_list_groups(ctx, cgm.ClassicListGroupsRequest())
    assert (listed.error_code, listed.groups) == (ErrorCode.NONE, [])
