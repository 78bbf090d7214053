"""Admin against the fake cluster: topic lifecycle, typed errors, controller moves."""

from __future__ import annotations

import pytest
import trio
from client_fakes import FakeCluster

from rillet.client import Admin, NewTopic
from rillet.client.errors import (
    InvalidPartitionsError,
    InvalidTopicError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from rillet.wire.messages import CreateTopicsRequest


async def test_topic_lifecycle(cluster: FakeCluster) -> None:
    async with Admin(cluster.bootstrap) as admin:
        await admin.create_topics([NewTopic("a", 2), NewTopic("b", 1, 1, {"retention.ms": "1"})])
        assert await admin.list_topics() == ["a", "b"]
        (a,) = await admin.describe_topics(["a"])
        assert [(p.partition, p.leader, p.replicas, p.isr) for p in a.partitions] == [
            (0, 0, [0], [0]),
            (1, 0, [0], [0]),
        ]
        assert [t.name for t in await admin.describe_topics()] == ["a", "b"]
        await admin.delete_topics(["a"])
        assert await admin.list_topics() == ["b"]
        cluster_info = await admin.describe_cluster()
        assert [n.node_id for n in cluster_info.nodes] == [0, 1]


async def test_per_topic_errors_are_typed(cluster: FakeCluster) -> None:
    async with Admin(cluster.bootstrap) as admin:
        await admin.create_topics([NewTopic("dup", 1)])
        with pytest.raises(TopicAlreadyExistsError):
            await admin.create_topics([NewTopic("dup", 1)])
        with pytest.raises(InvalidTopicError):
            await admin.create_topics([NewTopic("bad name!", 1), NewTopic("fine", 1)])
        assert "fine" in await admin.list_topics()  # the valid one was created
        with pytest.raises(InvalidPartitionsError):
            await admin.create_topics([NewTopic("zero", 0)], validate_only=True)
        with pytest.raises(UnknownTopicOrPartitionError):
            await admin.delete_topics(["nope"])
        with pytest.raises(UnknownTopicOrPartitionError):
            await admin.describe_topics(["nope"])
    with pytest.raises(TopicAlreadyExistsError):  # not wrapped in an ExceptionGroup
        async with Admin(cluster.bootstrap) as admin:
            await admin.create_topics([NewTopic("dup", 1)])


async def test_a_moved_controller_is_followed(cluster: FakeCluster) -> None:
    async with Admin(cluster.bootstrap, retry_backoff_ms=5) as admin:
        await admin.list_topics()  # metadata: controller 0
        cluster.controller_id = 1
        with trio.fail_after(5):
            await admin.create_topics([NewTopic("moved", 1)])
    assert [node for node, _ in cluster.of_type(CreateTopicsRequest)] == [0, 1]
    assert ("moved", 0) in cluster.logs
