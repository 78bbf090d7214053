"""A new controller finishes what the old one could not: commits and leaves are retried.

Issue 16: with repeated controller changes, a member that left while no controller answered
stayed registered (its partitions went unconsumed for 33 to 46 s), and offset commits that
failed while no controller was known were dropped (up to 16,518 duplicate deliveries per
run). The member's calls go through its coordinator link; here the link talks to an
in-memory coordinator whose answers each test scripts.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest
import trio

from rillet.client import GroupConsumer, TopicPartition
from rillet.client.coordinator_link import CoordinatorLink
from rillet.client.errors import (
    ConnectionFailedError,
    CoordinatorNotAvailableError,
    IllegalGenerationError,
    UnknownMemberIdError,
)
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode

TP = TopicPartition("t", 0)


class FakeCoordinator:
    """Connections to a coordinator that answers from a script: a response, an exception
    to raise, or the string "no controller" (FindCoordinator fails: none is known)."""

    def __init__(self, *script: Any) -> None:
        self.script: deque[Any] = deque(script)
        self.requests: list[Any] = []
        self.finds = 0
        self.closed = False

    async def find(self) -> FakeCoordinator:
        self.finds += 1
        if self.script and self.script[0] == "no controller":
            self.script.popleft()
            raise CoordinatorNotAvailableError("no controller known yet")
        return self

    async def request(self, request: Any, timeout_s: float) -> Any:
        self.requests.append(request)
        await trio.lowlevel.checkpoint()
        item = self.script.popleft() if self.script else ok_for(request)
        if isinstance(item, BaseException):
            raise item
        return item

    def of_type(self, kind: type) -> list[Any]:
        return [r for r in self.requests if isinstance(r, kind)]


def ok_for(request: Any) -> Any:
    if isinstance(request, gm.OffsetCommitRequest):
        return commit_answer(ErrorCode.NONE)
    return gm.LeaveGroupResponse(ErrorCode.NONE)


def commit_answer(partition_code: ErrorCode, code: ErrorCode = ErrorCode.NONE) -> Any:
    if code != ErrorCode.NONE:
        return gm.OffsetCommitResponse(code)
    return gm.OffsetCommitResponse(ErrorCode.NONE, [gm.PartitionError("t", 0, partition_code)])


def member(coordinator: FakeCoordinator, **options: Any) -> GroupConsumer:
    consumer = GroupConsumer("127.0.0.1:1", "g", topics=["t"], **options)
    consumer._link = CoordinatorLink(coordinator.find, "g", consumer._request_timeout_s)
    consumer.member_id, consumer.generation = "m", 3
    consumer._owned = {TP}
    consumer.assign([TP])
    consumer._sub.state(TP).set_position(42)
    return consumer


async def test_the_final_commit_and_the_leave_wait_for_a_controller(autojump_clock: Any) -> None:
    coordinator = FakeCoordinator(
        ConnectionFailedError("the controller died"),  # the commit in flight
        "no controller",  # nobody answers FindCoordinator for a while
        "no controller",
        commit_answer(ErrorCode.NONE, code=ErrorCode.NOT_COORDINATOR),  # a node that lost it
        commit_answer(ErrorCode.NONE),  # the new controller takes the commit
        gm.LeaveGroupResponse(ErrorCode.COORDINATOR_NOT_AVAILABLE),
        ConnectionFailedError("and that controller died too"),
        gm.LeaveGroupResponse(ErrorCode.NONE),
    )
    await member(coordinator)._closing(None)
    commits = coordinator.of_type(gm.OffsetCommitRequest)
    assert len(commits) == 3 and all(c.offsets[0].offset == 42 for c in commits)
    assert all((c.member_id, c.generation) == ("m", 3) for c in commits)
    assert len(coordinator.of_type(gm.LeaveGroupRequest)) == 3
    assert not coordinator.script  # the leave was taken


async def test_a_commit_not_taken_by_a_partition_is_committed_again(autojump_clock: Any) -> None:
    coordinator = FakeCoordinator(
        commit_answer(ErrorCode.REQUEST_TIMED_OUT),  # the Raft commit timed out
        commit_answer(ErrorCode.NOT_COORDINATOR),
        commit_answer(ErrorCode.NONE),
    )
    await member(coordinator).commit({TP: 7})
    assert len(coordinator.of_type(gm.OffsetCommitRequest)) == 3


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (ErrorCode.ILLEGAL_GENERATION, IllegalGenerationError),
        (ErrorCode.UNKNOWN_MEMBER_ID, UnknownMemberIdError),
    ],
)
async def test_a_fenced_commit_is_refused_not_retried(
    code: ErrorCode, error: type[Exception], autojump_clock: Any
) -> None:
    for answer in (commit_answer(code), commit_answer(ErrorCode.NONE, code=code)):
        coordinator = FakeCoordinator(answer)
        with pytest.raises(error):
            await member(coordinator).commit({TP: 7})
        assert len(coordinator.requests) == 1


async def test_closing_gives_up_after_the_close_timeout(autojump_clock: Any) -> None:
    coordinator = FakeCoordinator(*["no controller"] * 10_000)
    consumer = member(coordinator, close_timeout_ms=5_000)
    start = trio.current_time()
    await consumer._closing(None)
    assert 4.0 <= trio.current_time() - start <= 5.0  # bounded by close_timeout_ms
    assert coordinator.finds > 5 and not coordinator.requests


async def test_a_heartbeat_call_still_fails_fast() -> None:
    """The membership loop retries heartbeats itself: one call raises the first failure."""
    coordinator = FakeCoordinator(ConnectionFailedError("gone"))
    link = CoordinatorLink(coordinator.find, "g", 30.0)
    with pytest.raises(ConnectionFailedError):
        await link.call(gm.LeaveGroupRequest("g", "m"))
    assert len(coordinator.requests) == 1


async def test_an_assignment_whose_offsets_cannot_be_read_yet_is_taken_later(
    autojump_clock: Any,
) -> None:
    """Found by the integration test that kills the Raft leader mid-rebalance: a new
    member's OffsetFetch for its first assignment went to the dying controller, the failure
    escaped the membership task and ended the consumer, so the group never had three
    members again. The offsets are now asked for across coordinator changes, and partitions
    whose offsets stay unreadable are not taken (the next heartbeat assigns them again)."""
    fetched = gm.OffsetFetchResponse(ErrorCode.NONE, [gm.FetchedOffset("t", 0, 17)])
    coordinator = FakeCoordinator(
        ConnectionFailedError("the controller died"),
        "no controller",
        gm.OffsetFetchResponse(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
        fetched,
    )
    consumer = member(coordinator)
    consumer._owned = set()
    consumer.assign([])
    assert await consumer._assign({TP})
    assert consumer._owned == {TP} and consumer._sub.state(TP).position == 17
    assert len(coordinator.of_type(gm.OffsetFetchRequest)) == 3

    never = FakeCoordinator(*["no controller"] * 10_000)
    consumer = member(never)
    consumer._owned = set()
    consumer.assign([])
    assert not await consumer._assign({TP})  # raised before: the membership task died
    assert consumer._owned == set()
