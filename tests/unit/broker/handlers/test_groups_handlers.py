"""Consumer-group apis (handlers/groups.py) on the running controller: FindCoordinator names
it, heartbeats join and assign, commits check the member's generation, and reads come from
the committed state; a node that is not the controller answers NOT_COORDINATOR."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from broker_context import middle
from voter_context import Voter, answer, voter

from rillet.broker.handlers.groups import (
    handle_describe_groups,
    handle_find_coordinator,
    handle_heartbeat,
    handle_leave,
    handle_list_groups,
    handle_offset_commit,
    handle_offset_fetch,
)
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode


def join(group: str = "g", member_id: str = "") -> gm.ConsumerGroupHeartbeatRequest:
    return gm.ConsumerGroupHeartbeatRequest(group, member_id, 10_000, ["t"], client_host="c1")


async def joined(v: Voter, group: str = "g") -> gm.ConsumerGroupHeartbeatResponse:
    await v.live_brokers(1)
    await v.topic("t", 2)
    first: gm.ConsumerGroupHeartbeatResponse = await answer(handle_heartbeat(v.ctx, join(group)))
    assert first.error_code == ErrorCode.NONE and first.member_id
    return first


def commit(member_id: str, generation: int, offset: int = 5) -> gm.OffsetCommitRequest:
    return gm.OffsetCommitRequest(
        "g", member_id, generation, [gm.OffsetCommitPartition("t", 0, offset, "m")]
    )


async def test_find_coordinator_names_the_controller_once_it_is_a_registered_broker(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        unknown = handle_find_coordinator(v.ctx, gm.FindCoordinatorRequest("g"))
        assert unknown.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
        await v.live_brokers(1)
        found = handle_find_coordinator(v.ctx, gm.FindCoordinatorRequest("g"))
        assert (found.error_code, found.node_id, found.host, found.port) == (
            ErrorCode.NONE,
            1,
            "host1",
            9001,
        )


async def test_a_heartbeat_joins_and_assigns_and_elsewhere_is_not_coordinator(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        first = await joined(v)
        member = first.member_id
        owned = [gm.GroupTopicPartitions("t", [0, 1])]
        for _ in range(5):  # until the member owns what it was assigned
            beat = await answer(
                handle_heartbeat(
                    v.ctx, gm.ConsumerGroupHeartbeatRequest("g", member, 10_000, ["t"], owned=owned)
                )
            )
            assert beat.error_code == ErrorCode.NONE
        assert beat.member_id == member and beat.generation >= 1
        assert [(a.topic, sorted(a.partitions)) for a in beat.assignment] == [("t", [0, 1])]
        kafka = await answer(
            handle_heartbeat(
                v.ctx,
                gm.ConsumerGroupHeartbeatRequest("k", "", 10_000, ["t"], member_epoch=0),
            )
        )
        assert kafka.error_code == ErrorCode.NONE and kafka.member_id  # Kafka's own protocol
    elsewhere = middle(tmp_path / "b").ctx
    refused = handle_heartbeat(elsewhere, join())
    assert isinstance(refused, gm.ConsumerGroupHeartbeatResponse)
    assert refused.error_code == ErrorCode.NOT_COORDINATOR


async def test_commits_need_the_members_generation_and_are_read_back(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        first = await joined(v)
        done = await answer(handle_offset_commit(v.ctx, commit(first.member_id, first.generation)))
        assert done.error_code == ErrorCode.NONE
        assert [(p.topic, p.partition, p.error_code) for p in done.partitions] == [
            ("t", 0, ErrorCode.NONE)
        ]
        assert first.generation >= 1
        stale = await answer(handle_offset_commit(v.ctx, commit(first.member_id, 0)))
        assert stale.error_code == ErrorCode.ILLEGAL_GENERATION
        stranger = await answer(handle_offset_commit(v.ctx, commit("nobody", first.generation)))
        assert stranger.error_code == ErrorCode.UNKNOWN_MEMBER_ID
        fetched = handle_offset_fetch(v.ctx, gm.OffsetFetchRequest("g", None))
        assert isinstance(fetched, gm.OffsetFetchResponse)
        assert [(o.topic, o.partition, o.offset, o.metadata) for o in fetched.offsets] == [
            ("t", 0, 5, "m")
        ]
    elsewhere = middle(tmp_path / "b").ctx
    refused = handle_offset_commit(elsewhere, commit("m", 1))
    assert isinstance(refused, gm.OffsetCommitResponse)
    assert refused.error_code == ErrorCode.NOT_COORDINATOR


async def test_a_member_leaves_once_and_the_group_is_listed_and_described(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        first = await joined(v)
        await answer(handle_heartbeat(v.ctx, join("other")))
        listed = handle_list_groups(v.ctx, gm.ListGroupsRequest())
        assert listed.error_code == ErrorCode.NONE
        assert [(g.group_id, g.members) for g in listed.groups] == [("g", 1), ("other", 1)]
        described = handle_describe_groups(v.ctx, gm.DescribeGroupsRequest(["g", "nope"]))
        g, nope = described.groups
        assert (g.error_code, [m.member_id for m in g.members]) == (
            ErrorCode.NONE,
            [first.member_id],
        )
        assert g.members[0].topics == ["t"] and g.members[0].client_host == "c1"
        assert nope.error_code == ErrorCode.GROUP_ID_NOT_FOUND
        left = await answer(handle_leave(v.ctx, gm.LeaveGroupRequest("g", first.member_id)))
        assert left.error_code == ErrorCode.NONE
        again = await answer(handle_leave(v.ctx, gm.LeaveGroupRequest("g", first.member_id)))
        assert again.error_code == ErrorCode.UNKNOWN_MEMBER_ID
        after = handle_describe_groups(v.ctx, gm.DescribeGroupsRequest(["g"])).groups[0]
        assert after.members == []
    elsewhere = middle(tmp_path / "b").ctx
    refused = handle_leave(elsewhere, gm.LeaveGroupRequest("g", "m"))
    assert isinstance(refused, gm.LeaveGroupResponse)
    assert refused.error_code == ErrorCode.NOT_COORDINATOR
