"""Admin answers that stay true across a controller change and lagging nodes (issue 16).

A client that resends a create or delete after losing the answer (the controller died
mid-request) is told it succeeded, not TopicAlreadyExists / UnknownTopic about its own
change; and a client told "created" finds the topic on whichever node it asks next.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from cluster_checks import FAST_ELECTIONS, agreed_state, raft_leader, wait_for

from rillet.client.connection import BrokerConnection
from rillet.launcher.local_cluster import LocalCluster, plan_cluster
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import CreateTopicsRequest, DeleteTopicsRequest, MetadataRequest
from rillet.wire.messages import NewTopic as NewTopicRequest

pytestmark = pytest.mark.integration

CONFIG = FAST_ELECTIONS + "broker_session_timeout_ms = 2000\nbroker_heartbeat_interval_ms = 300\n"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(plan_cluster(tmp_path, 3, CONFIG)) as c:
        c.start()
        yield c


def _send(port: int, requests: list[Any]) -> list[Any]:
    answers: list[Any] = []

    async def send_all() -> None:
        async with trio.open_nursery() as nursery:
            conn = BrokerConnection("127.0.0.1", port)
            await conn.connect(nursery, 5)
            for request in requests:
                answers.append(await conn.request(request, 15))
            conn.close()

    trio.run(send_all)
    return answers


def test_a_resent_create_or_delete_succeeds_after_the_controller_died(
    cluster: LocalCluster,
) -> None:
    wait_for("agreement", lambda: agreed_state(cluster, [1, 2, 3]))
    leader = raft_leader(cluster)
    assert leader is not None
    create = CreateTopicsRequest([NewTopicRequest("mine", 1, 3)], 10_000, request_id="c-1")
    setup = CreateTopicsRequest([NewTopicRequest("doomed", 1, 3)], 10_000, request_id="c-2")
    delete = DeleteTopicsRequest(["doomed"], 10_000, request_id="d-1")
    first = _send(cluster.plan.node(leader).port, [create, setup, delete])
    assert [a.topics[0].error_code for a in first] == [ErrorCode.NONE] * 3

    # The controller dies; the client, which never saw these answers, resends elsewhere.
    cluster.kill(leader)
    survivor = next(i for i in (1, 2, 3) if i != leader)

    def new_leader() -> int | None:
        found = raft_leader(cluster, [i for i in (1, 2, 3) if i != leader])
        return found if found is not None and found != leader else None

    wait_for("a new Raft leader", new_leader, 15)
    port = cluster.plan.node(survivor).port

    def resent() -> list[int] | None:
        codes = [a.topics[0].error_code for a in _send(port, [create, delete])]
        return None if ErrorCode.NOT_CONTROLLER in codes else codes

    assert wait_for("the resends answered", resent, 20) == [ErrorCode.NONE, ErrorCode.NONE]
    # Another request for the same topic still hears the truth.
    other = CreateTopicsRequest([NewTopicRequest("mine", 1, 3)], 10_000, request_id="c-9")
    (answer,) = _send(port, [other])
    assert answer.topics[0].error_code == ErrorCode.TOPIC_ALREADY_EXISTS


def test_every_node_answers_metadata_with_a_topic_just_created(cluster: LocalCluster) -> None:
    """The create's answer names its metadata offset; every node asked for that offset
    answers with the topic, however far behind it was (the demo's 'created topic demo'
    then 'UnknownTopicOrPartitionError')."""
    wait_for("agreement", lambda: agreed_state(cluster, [1, 2, 3]))
    ports = [n.port for n in cluster.plan.nodes]
    for i in range(5):
        name = f"fresh-{i}"
        (created,) = _send(ports[i % 3], [CreateTopicsRequest([NewTopicRequest(name, 3, 3)])])
        assert created.topics[0].error_code == ErrorCode.NONE and created.metadata_offset > 0
        for port in ports:
            (md,) = _send(port, [MetadataRequest([name], created.metadata_offset)])
            assert md.metadata_offset >= created.metadata_offset
            assert md.topics[0].error_code == ErrorCode.NONE, (port, md.topics[0])
