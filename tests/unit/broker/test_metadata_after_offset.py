"""A node answers Metadata only once it has applied the offset the client names.

Issue 16: ``describe_topics`` right after ``create_topics`` failed when the describe reached a
node that had not applied the creation yet (3-4 runs in 20). The client now names the
metadata offset of the change; a node that lags waits (bounded) for its follower to apply it.

A client that names no offset (any Kafka client) is protected by the node: after all nodes
were killed, a restarted node answered from the little it had applied, and librdkafka took a
6-partition topic for 0 partitions. Until it has applied what the quorum had committed after
it started, a node refuses with LEADER_NOT_AVAILABLE.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any, cast

import trio
import trio.testing

from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.cluster.metadata_view import MetadataView
from rillet.broker.config import NodeConfig
from rillet.broker.dispatcher import Dispatcher
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.groups import handle_offset_fetch
from rillet.broker.handlers.metadata import handle_metadata_request
from rillet.broker.handlers.refused import Refused
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.records import (
    PartitionRecord,
    RegisterBroker,
    TopicRecord,
    encode_entry,
)
from rillet.raft.quorum import Entry, Snapshot
from rillet.wire.api import ApiKey
from rillet.wire.error_codes import ErrorCode
from rillet.wire.group_messages import (
    FetchedOffset,
    GroupOffsets,
    GroupTopicPartitions,
    OffsetFetchGroup,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from rillet.wire.messages import MetadataRequest, MetadataResponse
from rillet.wire.protocol import PROTOCOL_VERSION, RequestHeader


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


def _context(
    follower: MetadataFollower, request_timeout_ms: int = 30_000, start_up_offset: int | None = 0
) -> BrokerContext:
    """``start_up_offset``: the committed offset the node learned after it started (None:
    none yet); 0 makes it caught up at once, so only the client's offset waits."""
    config = NodeConfig()
    config = dataclasses.replace(
        config, quorum=dataclasses.replace(config.quorum, request_timeout_ms=request_timeout_ms)
    )
    view = MetadataView(1, follower, ClusterAuth(config.cluster_id, "a-test-cluster-secret"))
    if start_up_offset is not None:
        view.readiness.learn_committed(start_up_offset)
    # No partition is hosted here: the handler only asks which leaders are cut off.
    return BrokerContext(config, cast(Any, SimpleNamespace(stranded={})), 0, view)


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


def _restart_log(partitions: int) -> tuple[HeldBackLog, int]:
    """The metadata log a cluster had before all its nodes were killed: a broker and a topic
    of ``partitions`` partitions (the restarted node has applied none of it yet), and the
    offset of the node's registration after the restart."""
    log = HeldBackLog()
    log.entries.append(Entry(1, 1, encode_entry([RegisterBroker(1, "old", "127.0.0.1", 9092)])))
    records = [PartitionRecord("tid", p, [1], [1], 1) for p in range(partitions)]
    log.entries.append(Entry(2, 1, encode_entry([TopicRecord("t", "tid"), *records])))
    log.entries.append(Entry(3, 2, encode_entry([RegisterBroker(1, "new", "127.0.0.1", 9092)])))
    return log, 3


async def test_a_restarted_node_refuses_metadata_until_it_applied_its_registration() -> None:
    log, registered_at = _restart_log(6)
    follower = MetadataFollower(log)
    ctx = _context(follower, start_up_offset=None)
    dispatcher = Dispatcher(ctx)
    for topics in (None, ["t"]):  # all topics, and the topic the producer writes to
        reply = dispatcher.dispatch(
            RequestHeader(ApiKey.METADATA, PROTOCOL_VERSION, 7, None), MetadataRequest(topics)
        )
        assert reply is not None and reply.message is None and reply.waiting is None
        assert reply.error == ErrorCode.LEADER_NOT_AVAILABLE  # never "no topics"
        assert reply.error_message == "metadata not caught up: no committed offset learned yet"
    ctx.metadata.readiness.learn_committed(registered_at)  # the controller's answer
    refused = handle_metadata_request(ctx, MetadataRequest(["t"]))
    assert isinstance(refused, Refused) and "applied offset 0 of 3" in refused.message
    async with trio.open_nursery() as nursery:
        nursery.start_soon(follower.run)
        with trio.fail_after(5):
            await follower.wait_applied(registered_at)
        nursery.cancel_scope.cancel()
    answer = handle_metadata_request(ctx, MetadataRequest(None))
    assert isinstance(answer, MetadataResponse) and answer.metadata_offset == registered_at
    (topic,) = answer.topics
    assert (topic.name, len(topic.partitions)) == ("t", 6)
    assert ctx.metadata.readiness.answered_offset == registered_at


def test_a_restarted_node_refuses_offset_fetches_until_caught_up() -> None:
    """Answered from an empty state, OffsetFetch says "nothing committed" and the consumer
    resets its positions (re-reads everything, or skips to the end)."""
    log, _ = _restart_log(1)
    ctx = _context(MetadataFollower(log), start_up_offset=None)
    refused = handle_offset_fetch(ctx, OffsetFetchRequest("g", None))
    assert isinstance(refused, Refused)
    assert refused.error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS  # retried by consumers
    ctx.metadata.readiness.learn_committed(0)
    answered = handle_offset_fetch(ctx, OffsetFetchRequest("g", None))
    assert isinstance(answered, OffsetFetchResponse) and answered.error_code == ErrorCode.NONE
    # Kafka's OffsetFetch v8 asks for several groups: each is answered.
    batched = OffsetFetchRequest(
        "g", None, [OffsetFetchGroup("h", [GroupTopicPartitions("t", [0])])]
    )
    answered = handle_offset_fetch(ctx, batched)
    assert isinstance(answered, OffsetFetchResponse)
    assert answered.more_groups == [GroupOffsets("h", ErrorCode.NONE, [FetchedOffset("t", 0, -1)])]
