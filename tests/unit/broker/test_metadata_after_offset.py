"""A node answers Metadata only once it has applied the offset the client names.

Issue 16: ``describe_topics`` right after ``create_topics`` failed when the describe reached a
node that had not applied the creation yet (3-4 runs in 20). The client now names the
metadata offset of the change; a node that lags waits (bounded) for its follower to apply it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import trio
import trio.testing

from rillet.broker.cluster_auth import ClusterAuth
from rillet.broker.config import NodeConfig
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.metadata import handle_metadata_request
from rillet.broker.metadata_view import MetadataView
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.records import (
    PartitionRecord,
    RegisterBroker,
    TopicRecord,
    encode_entry,
)
from rillet.raft.quorum import Entry, Snapshot
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import MetadataRequest, MetadataResponse


class HeldBackLog:
    """A committed log whose entries reach the follower only when the test releases them."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self._more = trio.Event()

    def release(self, *records: Any) -> int:
        index = len(self.entries) + 1
        self.entries.append(Entry(index, 1, encode_entry(list(records))))
        self._more.set()
        self._more = trio.Event()
        return index

    async def read_committed(self, after_index: int, max_entries: int = 1000) -> list[Entry]:
        while len(self.entries) <= after_index:
            await self._more.wait()
        return self.entries[after_index : after_index + max_entries]

    def save_snapshot(self, snapshot: Snapshot) -> None:
        pass

    def latest_snapshot(self) -> Snapshot | None:
        return None


def _context(follower: MetadataFollower, request_timeout_ms: int = 30_000) -> BrokerContext:
    config = NodeConfig()
    config = dataclasses.replace(
        config, quorum=dataclasses.replace(config.quorum, request_timeout_ms=request_timeout_ms)
    )
    view = MetadataView(1, follower, ClusterAuth(config.cluster_id, "a-test-cluster-secret"))
    return BrokerContext(config, cast(Any, None), 0, view)


async def _answer(ctx: BrokerContext, request: MetadataRequest) -> MetadataResponse:
    result = handle_metadata_request(ctx, request)
    if isinstance(result, MetadataResponse):
        return result
    return await result


async def test_a_lagging_node_waits_for_the_offset_the_client_saw() -> None:
    log = HeldBackLog()
    follower = MetadataFollower(log)
    ctx = _context(follower)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(follower.run)
        registered = log.release(RegisterBroker(1, "inc", "127.0.0.1", 9092))
        with trio.fail_after(5):
            await follower.wait_applied(registered)
        # The controller created the topic at the next offset; this node has not applied it.
        created_at = registered + 1
        answers: list[MetadataResponse] = []
        answered = trio.Event()

        async def ask() -> None:
            answers.append(await _answer(ctx, MetadataRequest(["t"], created_at)))
            answered.set()

        nursery.start_soon(ask)
        await trio.testing.wait_all_tasks_blocked()
        assert answers == []  # waiting, not answering "unknown topic"
        log.release(TopicRecord("t", "tid"), PartitionRecord("tid", 0, [1], [1], 1))
        with trio.fail_after(5):
            await answered.wait()
        nursery.cancel_scope.cancel()
    (topic,) = answers[0].topics
    assert topic.error_code == ErrorCode.NONE and [p.partition for p in topic.partitions] == [0]
    assert answers[0].metadata_offset == created_at


async def test_an_applied_offset_is_answered_at_once_and_a_lost_one_after_the_timeout() -> None:
    log = HeldBackLog()
    follower = MetadataFollower(log)
    ctx = _context(follower, request_timeout_ms=50)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(follower.run)
        applied = log.release(RegisterBroker(1, "inc", "127.0.0.1", 9092))
        with trio.fail_after(5):
            await follower.wait_applied(applied)
        now = handle_metadata_request(ctx, MetadataRequest(None, applied))
        assert isinstance(now, MetadataResponse) and now.metadata_offset == applied
        # Producers size their batches by it for topics without max.message.bytes.
        assert now.max_batch_bytes == ctx.config.log.max_batch_bytes
        # An offset this node never reaches (a client that talked to another cluster): the
        # answer comes after the bounded wait, saying which offset it reflects.
        with trio.fail_after(5):
            late = await _answer(ctx, MetadataRequest(["t"], applied + 100))
        assert late.metadata_offset == applied
        assert late.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        nursery.cancel_scope.cancel()
