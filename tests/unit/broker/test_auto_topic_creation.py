"""Topic auto-creation on Metadata (broker/handlers/auto_topic_creation.py and its driver).

The core decides, per unknown name of a request that allows auto-creation: create it once
however many ask at once (the others hear LEADER_NOT_AVAILABLE), refuse invalid and Kafka
internal names (INVALID_TOPIC), answer UNKNOWN_TOPIC_OR_PARTITION with the setting's name
when the node does not create topics, TOPIC_AUTHORIZATION_FAILED when the asker may not.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import trio
from broker_context import middle

from rillet.broker.config import NodeConfig, TopicDefaults
from rillet.broker.config.authorizer_config import AuthorizerConfig
from rillet.broker.dispatcher import Dispatcher
from rillet.broker.handlers import auto_topics
from rillet.broker.handlers.auto_topic_creation import AutoTopicCreations, anyone, creation_answer
from rillet.broker.handlers.metadata import handle_metadata_request
from rillet.broker.security.session import Session
from rillet.metadata_quorum.acl_registry import AclCreated
from rillet.wire.acls import AclBinding, Operation, PatternType, Permission, ResourceType
from rillet.wire.api import ApiKey
from rillet.wire.error_codes import ErrorCode
from rillet.wire.forwarding import ForwardedFor
from rillet.wire.messages import (
    CreateTopicsRequest,
    CreateTopicsResponse,
    MetadataRequest,
    MetadataResponse,
    TopicMetadata,
)
from rillet.wire.protocol import PROTOCOL_VERSION, RequestHeader


def codes(answers: dict[str, TopicMetadata]) -> dict[str, int]:
    return {name: answer.error_code for name, answer in answers.items()}


def test_many_askers_create_a_topic_once_and_hear_leader_not_available() -> None:
    creations = AutoTopicCreations()
    first = creations.plan(["new", "new"], True, anyone)
    assert first.create == ["new"] and first.answers == {}
    second = creations.plan(["new", "other"], True, anyone)
    assert second.create == ["other"]
    assert codes(second.answers) == {"new": ErrorCode.LEADER_NOT_AVAILABLE}
    creations.finished(["new", "other"])
    assert creations.in_flight() == frozenset()
    # Finished (answered or given up): the next asker sends it again (the controller says
    # TOPIC_ALREADY_EXISTS if it was created meanwhile, which is no error).
    assert creations.plan(["new"], True, anyone).create == ["new"]


def test_invalid_and_internal_names_are_refused_whatever_the_setting() -> None:
    creations = AutoTopicCreations()
    for enabled in (True, False):
        plan = creations.plan(["bad name", "__consumer_offsets", "x" * 250], enabled, anyone)
        assert plan.create == []
        assert set(codes(plan.answers).values()) == {ErrorCode.INVALID_TOPIC}


def test_setting_off_answers_unknown_topic_naming_the_setting() -> None:
    plan = AutoTopicCreations().plan(["t"], False, anyone)
    assert plan.create == []
    (answer,) = plan.answers.values()
    assert answer.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert answer.error_message is not None
    assert "'t'" in answer.error_message and "auto.create.topics.enable" in answer.error_message


def test_a_caller_without_create_rights_creates_nothing() -> None:
    creations = AutoTopicCreations()
    plan = creations.plan(["mine-1", "theirs"], True, lambda name: name.startswith("mine-"))
    assert plan.create == ["mine-1"]
    assert codes(plan.answers) == {"theirs": ErrorCode.AUTHORIZATION_FAILED}
    assert creations.in_flight() == {"mine-1"}


def test_the_controllers_answer_becomes_retry_or_its_refusal() -> None:
    for retry in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS, ErrorCode.NOT_CONTROLLER):
        assert creation_answer("t", retry, None).error_code == ErrorCode.LEADER_NOT_AVAILABLE
    refused = creation_answer("t", ErrorCode.INVALID_REPLICATION_FACTOR, "3 > 1 brokers")
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.INVALID_REPLICATION_FACTOR,
        "3 > 1 brokers",
    )


def _ask(tmp_path: Path, request: MetadataRequest, enabled: bool = True) -> MetadataResponse:
    """One Metadata request to a node that cannot reach a controller (none in this test):
    a creation it sends finds no answer, as during a controller change."""
    config = NodeConfig(
        node_id=1,
        data_dir=tmp_path,
        topics=TopicDefaults(auto_create_topics_enable=enabled),
        quorum=dataclasses.replace(NodeConfig().quorum, request_timeout_ms=200),
    )
    m = middle(tmp_path, config)

    async def main() -> MetadataResponse:
        with trio.fail_after(5):
            answer = handle_metadata_request(m.ctx, request)
            return answer if isinstance(answer, MetadataResponse) else await answer

    response = trio.run(main)
    assert m.ctx.auto_topics.in_flight() == frozenset()  # nothing left held
    return response


def test_metadata_allowing_auto_creation_answers_leader_not_available(tmp_path: Path) -> None:
    response = _ask(tmp_path, MetadataRequest(["fresh"], allow_auto_topic_creation=True))
    assert [(t.name, t.error_code) for t in response.topics] == [
        ("fresh", ErrorCode.LEADER_NOT_AVAILABLE)
    ]


def test_metadata_without_the_flag_or_the_setting_creates_nothing(tmp_path: Path) -> None:
    plain = _ask(tmp_path / "a", MetadataRequest(["fresh"]))
    assert [t.error_code for t in plain.topics] == [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
    off = _ask(tmp_path / "b", MetadataRequest(["fresh"], allow_auto_topic_creation=True), False)
    (topic,) = off.topics
    assert topic.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert topic.error_message is not None and "auto.create.topics.enable" in topic.error_message


def test_the_dispatcher_checks_the_askers_create_right(tmp_path: Path) -> None:
    """With the authorizer on, a caller that may describe the topic but not create it gets
    TOPIC_AUTHORIZATION_FAILED, and nothing is sent for creation."""
    (topic,) = _alice_asks_for_fresh(tmp_path, Operation.DESCRIBE).topics
    assert topic.error_code == ErrorCode.AUTHORIZATION_FAILED


def test_a_creation_is_sent_in_the_askers_name(tmp_path: Path, monkeypatch: Any) -> None:
    """The controller decides a creation a node forwards as the client it names (a node is
    no super user): the CreateTopics request the Metadata request starts names the asker."""
    sent: list[CreateTopicsRequest] = []

    async def creating(ctx: object, request: CreateTopicsRequest) -> CreateTopicsResponse:
        sent.append(request)
        return CreateTopicsResponse([])

    monkeypatch.setattr(auto_topics, "handle_create_topics", creating)
    _alice_asks_for_fresh(tmp_path, Operation.DESCRIBE, Operation.CREATE)
    assert [r.forwarded_for for r in sent] == [ForwardedFor("User:alice", "10.0.0.1")]


def _alice_asks_for_fresh(tmp_path: Path, *allowed: Operation) -> MetadataResponse:
    """A Metadata request allowing auto-creation of topic "fresh", dispatched (the
    authorizer on) for User:alice, whose ACLs on the topic allow ``allowed``."""
    config = NodeConfig(node_id=1, data_dir=tmp_path, authorizer=AuthorizerConfig(enabled=True))
    m = middle(tmp_path, config)
    for operation in allowed:
        binding = AclBinding(
            ResourceType.TOPIC, "fresh", PatternType.LITERAL, "User:alice", "*",
            operation, Permission.ALLOW,
        )  # fmt: skip
        m.ctx.metadata.state.acls.apply(AclCreated(binding))
    header = RequestHeader(ApiKey.METADATA, PROTOCOL_VERSION, 1, "test")
    request = MetadataRequest(["fresh"], allow_auto_topic_creation=True)
    reply = Dispatcher(m.ctx).dispatch(header, request, Session("kafka", "10.0.0.1", "User:alice"))

    async def main() -> MetadataResponse:
        assert reply is not None and reply.waiting is not None
        with trio.fail_after(5):
            answer: MetadataResponse = await reply.waiting
            return answer

    return trio.run(main)
