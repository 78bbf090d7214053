"""The membership loop rides out a controller change instead of ending the consumer.

Found by the consumer-group integration test under load: the metadata quorum's leader changed
while three members were joining, the controller answered a heartbeat with REQUEST_TIMED_OUT
("metadata commit failed: leadership changed"), and the member raised it from ``poll`` and
died. Such answers say the heartbeat was not taken yet, not that the membership is wrong:
they are retried with backoff, like Kafka's consumer does.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from rillet.client import GroupConsumer, TopicPartition
from rillet.wire import group_messages as gm
from rillet.wire.error_codes import ErrorCode


@pytest.fixture
def autojump_clock() -> trio.testing.MockClock:
    """Virtual time (pytest-trio runs the test on any Clock fixture): backoffs take none."""
    return trio.testing.MockClock(autojump_threshold=0)


def heartbeat_answers(
    consumer: GroupConsumer, answers: list[gm.ConsumerGroupHeartbeatResponse]
) -> list[Any]:
    """Make the coordinator answer heartbeats with ``answers`` in turn; stop after the last."""
    sent: list[Any] = []

    async def call(request: Any) -> Any:
        sent.append(request)
        if len(sent) == len(answers):
            consumer._stopping = True
        await trio.lowlevel.checkpoint()
        return answers[len(sent) - 1]

    consumer._call = call  # type: ignore[method-assign]
    return sent


@pytest.mark.parametrize(
    "code",
    [
        ErrorCode.REQUEST_TIMED_OUT,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ],
    ids=lambda code: code.name,
)
async def test_a_heartbeat_not_taken_during_a_controller_change_is_sent_again(
    code: ErrorCode, autojump_clock: trio.testing.MockClock
) -> None:
    consumer = GroupConsumer("127.0.0.1:1", "g", topics=["t"])
    assigned = gm.ConsumerGroupHeartbeatResponse(
        ErrorCode.NONE, "m1", 4, 1000, [gm.GroupTopicPartitions("t", [0])]
    )
    failed = gm.ConsumerGroupHeartbeatResponse(code, error_message="leadership changed")
    sent = heartbeat_answers(consumer, [failed, failed, assigned])

    async def committed(partitions: Any, until_s: float | None) -> dict[TopicPartition, int]:
        return {TopicPartition("t", 0): 7}

    consumer._committed = committed  # type: ignore[method-assign]
    await consumer._membership()
    assert len(sent) == 3
    assert consumer._fetcher.pop_error() is None  # poll has nothing to raise
    assert (consumer.member_id, consumer.generation) == ("m1", 4)
    assert consumer.assignment() == {TopicPartition("t", 0)}
    assert consumer._sub.state(TopicPartition("t", 0)).position == 7


async def test_a_heartbeat_refused_for_good_reaches_poll(
    autojump_clock: trio.testing.MockClock,
) -> None:
    consumer = GroupConsumer("127.0.0.1:1", "g", topics=["t"])
    refused = gm.ConsumerGroupHeartbeatResponse(
        ErrorCode.GROUP_AUTHORIZATION_FAILED, error_message="not allowed"
    )
    heartbeat_answers(consumer, [refused])
    await consumer._membership()
    error = consumer._fetcher.pop_error()
    assert error is not None and "not allowed" in str(error)


async def test_a_join_sent_again_carries_the_same_member_id(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The coordinator may have committed a join whose answer timed out: sending it again
    with the id the member made keeps one member, not a second one holding partitions."""
    consumer = GroupConsumer("127.0.0.1:1", "g", topics=["t"])
    failed = gm.ConsumerGroupHeartbeatResponse(ErrorCode.REQUEST_TIMED_OUT)
    sent = heartbeat_answers(consumer, [failed, failed])
    await consumer._membership()
    assert [r.owned for r in sent] == [None, None]  # both are joins...
    assert sent[0].member_id and sent[0].member_id == sent[1].member_id  # ...of one member
    assert consumer.member_id == ""  # not joined as far as this member knows


async def test_a_member_whose_join_was_never_answered_leaves_on_close(
    autojump_clock: trio.testing.MockClock,
) -> None:
    consumer = GroupConsumer("127.0.0.1:1", "g", topics=["t"], close_timeout_ms=1000)
    sent = heartbeat_answers(
        consumer, [gm.ConsumerGroupHeartbeatResponse(ErrorCode.REQUEST_TIMED_OUT)]
    )
    await consumer._membership()  # one join sent, its answer a timeout
    (join,) = sent
    left: list[gm.LeaveGroupRequest] = []

    async def call(request: Any, until_s: float | None = None) -> Any:
        left.append(request)
        return gm.LeaveGroupResponse(ErrorCode.NONE)

    consumer._link.call = call  # type: ignore[method-assign]
    await consumer._closing(None)
    assert [r.member_id for r in left] == [join.member_id]


async def test_a_node_that_wants_to_make_the_id_itself_gets_an_empty_one(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A node from before members made their ids reads a join with an id as a heartbeat of
    an unknown member: the member joins again the old way."""
    consumer = GroupConsumer("127.0.0.1:1", "g", topics=["t"])
    unknown = gm.ConsumerGroupHeartbeatResponse(ErrorCode.UNKNOWN_MEMBER_ID)
    joined = gm.ConsumerGroupHeartbeatResponse(ErrorCode.NONE, "given", 1, 1000, [])
    sent = heartbeat_answers(consumer, [unknown, joined])
    await consumer._membership()
    assert sent[0].member_id != "" and sent[1].member_id == ""
    assert consumer.member_id == "given"
