"""Admin against the fake cluster: topic lifecycle, typed errors, controller moves."""

from __future__ import annotations

from dataclasses import replace

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
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteTopicsRequest,
    MetadataRequest,
    TopicResult,
)


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


async def test_resends_of_one_operation_carry_one_request_id(cluster: FakeCluster) -> None:
    """Issue 16: a create resent after a lost answer must be recognisable as the same request
    (the controller answers it with success instead of TopicAlreadyExistsError)."""
    async with Admin(cluster.bootstrap, retry_backoff_ms=5) as admin:
        await admin.list_topics()  # metadata: controller 0
        cluster.controller_id = 1
        with trio.fail_after(5):
            await admin.create_topics([NewTopic("again", 1)])
        cluster.controller_id = 0
        with trio.fail_after(5):
            await admin.delete_topics(["again"])
        await admin.create_topics([NewTopic("other", 1)])
    creates = [r.request_id for _, r in cluster.of_type(CreateTopicsRequest)]
    assert len(creates) == 3 and creates[0] == creates[1] != creates[2]
    assert all(creates)
    deletes = {r.request_id for _, r in cluster.of_type(DeleteTopicsRequest)}
    assert len(deletes) == 1 and "" not in deletes and not deletes & set(creates)


async def test_metadata_after_a_topic_change_asks_for_its_offset(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 16: describe right after create must not reach a node that has not applied the
    creation yet: the Metadata request names the offset the create was answered at."""
    create = cluster._create
    monkeypatch.setattr(
        cluster, "_create", lambda node, req: replace(create(node, req), metadata_offset=42)
    )
    async with Admin(cluster.bootstrap) as admin:
        await admin.create_topics([NewTopic("fresh", 1)])
        await admin.describe_topics(["fresh"])
    last = cluster.of_type(MetadataRequest)[-1][1]
    assert last.min_metadata_offset == 42


async def test_a_create_whose_commit_met_a_leader_change_is_resent(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``rillet demo`` once failed with "RequestTimedOutError: metadata commit failed:
    leadership changed": the fate of the create was unknown and the client gave up. With
    request ids a resend is safe, so the admin resends it."""
    create = cluster._create
    answers = iter([ErrorCode.REQUEST_TIMED_OUT])

    def once_unknown(node: int, req: CreateTopicsRequest) -> CreateTopicsResponse:
        code = next(answers, None)
        if code is not None:
            return CreateTopicsResponse([TopicResult(t.name, code) for t in req.topics])
        return create(node, req)

    monkeypatch.setattr(cluster, "_create", once_unknown)
    async with Admin(cluster.bootstrap, retry_backoff_ms=5) as admin:
        with trio.fail_after(5):
            await admin.create_topics([NewTopic("unsure", 1)])
        assert "unsure" in await admin.list_topics()
    ids = {r.request_id for _, r in cluster.of_type(CreateTopicsRequest)}
    assert len(cluster.of_type(CreateTopicsRequest)) == 2 and len(ids) == 1
