"""DeleteGroups and OffsetDelete (handlers/group_deletion.py) on the running controller:
an empty group goes with its offsets, a group with members stays; offsets of a topic the
group still consumes stay; elsewhere than the controller both answer NOT_COORDINATOR."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from broker_context import middle
from voter_context import Voter, answer, voter

from rillet.broker.handlers.group_deletion import (
    handle_delete_group_offsets,
    handle_delete_groups,
)
from rillet.broker.handlers.groups import handle_heartbeat, handle_offset_commit
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode


async def committed(v: Voter, group: str, *topics: str) -> None:
    """Offsets committed by a tool (no member) for partition 0 of each topic."""
    offsets = [gm.OffsetCommitPartition(t, 0, 3) for t in topics]
    done = await answer(handle_offset_commit(v.ctx, gm.OffsetCommitRequest(group, "", -1, offsets)))
    assert done.error_code == ErrorCode.NONE
    assert [p.error_code for p in done.partitions] == [ErrorCode.NONE] * len(topics)


async def with_a_member(v: Voter, group: str, topic: str) -> None:
    joined = await answer(
        handle_heartbeat(v.ctx, gm.ConsumerGroupHeartbeatRequest(group, "", 10_000, [topic]))
    )
    assert joined.error_code == ErrorCode.NONE


async def test_empty_groups_are_deleted_with_their_offsets_and_others_are_refused(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(1)
        await v.topic("t")
        await committed(v, "idle", "t")
        await with_a_member(v, "busy", "t")
        deleted = await answer(
            handle_delete_groups(v.ctx, gm.DeleteGroupsRequest(["idle", "busy", "ghost", ""]))
        )
        assert [(d.group_id, d.error_code) for d in deleted.results] == [
            ("idle", ErrorCode.NONE),
            ("busy", ErrorCode.GROUP_NOT_EMPTY),
            ("ghost", ErrorCode.GROUP_ID_NOT_FOUND),
            ("", ErrorCode.INVALID_GROUP_ID),
        ]
        assert "idle" not in v.state.groups.offsets
        assert v.state.groups.group("busy") is not None
    elsewhere = middle(tmp_path / "b").ctx
    refused = handle_delete_groups(elsewhere, gm.DeleteGroupsRequest(["a", "a", "b"]))
    assert isinstance(refused, gm.DeleteGroupsResponse)
    assert [(d.group_id, d.error_code) for d in refused.results] == [
        ("a", ErrorCode.NOT_COORDINATOR),
        ("b", ErrorCode.NOT_COORDINATOR),
    ]


async def test_offsets_are_deleted_unless_the_group_consumes_their_topic(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(1)
        await v.topic("t")
        await v.topic("old")
        await committed(v, "g", "t", "old")
        await with_a_member(v, "g", "t")
        asked = [gm.GroupTopicPartitions("t", [0]), gm.GroupTopicPartitions("old", [0])]
        deleted = await answer(
            handle_delete_group_offsets(v.ctx, gm.DeleteGroupOffsetsRequest("g", asked))
        )
        assert deleted.error_code == ErrorCode.NONE
        assert sorted((p.topic, p.error_code) for p in deleted.partitions) == [
            ("old", ErrorCode.NONE),
            ("t", ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC),
        ]
        left = v.state.groups.offsets["g"]
        assert [v.state.topics[tid].name for tid, _ in left] == ["t"]
        ghost = await answer(
            handle_delete_group_offsets(v.ctx, gm.DeleteGroupOffsetsRequest("ghost", asked))
        )
        assert (ghost.error_code, ghost.partitions) == (ErrorCode.GROUP_ID_NOT_FOUND, [])
    elsewhere = middle(tmp_path / "b").ctx
    refused = handle_delete_group_offsets(elsewhere, gm.DeleteGroupOffsetsRequest("g", asked))
    assert isinstance(refused, gm.DeleteGroupOffsetsResponse)
    assert refused.error_code == ErrorCode.NOT_COORDINATOR
