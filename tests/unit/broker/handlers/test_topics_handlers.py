"""DeleteTopics (handlers/topics.py; CreateTopics has its tests beside the Kafka front end):
decided by the controller, forwarded there once by another node, which answers after it has
applied the deletion; a resend with the same request id succeeds, an unknown topic is
refused, and a forwarded request that meets a node that is not the controller is not
forwarded again."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from broker_context import middle
from voter_context import answer, voter

from rillet.broker.handlers.topics import handle_delete_topics
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import DeleteTopicsRequest


async def test_a_topic_is_deleted_once_and_a_resend_succeeds(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(1)
        await v.topic("a", 2)
        request = DeleteTopicsRequest(["a", "ghost", "a"], request_id="req-1")
        deleted = await answer(handle_delete_topics(v.ctx, request))
        assert [(r.name, r.error_code) for r in deleted.topics] == [
            ("a", ErrorCode.NONE),
            ("ghost", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            ("a", ErrorCode.NONE),
        ]
        assert v.state.topic_by_name("a") is None
        assert deleted.metadata_offset == v.state.last_applied_index
        resent = await answer(
            handle_delete_topics(v.ctx, DeleteTopicsRequest(["a"], request_id="req-1"))
        )
        assert [r.error_code for r in resent.topics] == [ErrorCode.NONE]
        other = await answer(
            handle_delete_topics(v.ctx, DeleteTopicsRequest(["a"], request_id="req-2"))
        )
        assert [r.error_code for r in other.topics] == [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]


async def test_another_node_forwards_once_and_answers_after_applying(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(1)
        await v.topic("b")
        broker = await v.broker_only(tmp_path / "broker")
        deleted = await answer(handle_delete_topics(broker, DeleteTopicsRequest(["b"])))
        assert [r.error_code for r in deleted.topics] == [ErrorCode.NONE]
        assert broker.metadata.state.topic_by_name("b") is None  # applied there before the answer
        assert broker.metadata.applied_offset >= deleted.metadata_offset
        assert [c.forwarded for c in broker.metadata.link.calls] == [True]  # type: ignore[union-attr]
    not_controller = middle(tmp_path / "other").ctx
    again = await answer(
        handle_delete_topics(not_controller, DeleteTopicsRequest(["b"], forwarded=True))
    )
    assert [r.error_code for r in again.topics] == [ErrorCode.NOT_CONTROLLER]
