"""The dispatcher's own branches (broker/dispatcher.py), each answered as a typed error that
leaves the connection serving: an api it does not route (UNKNOWN_API), a native request of
another protocol version (UNSUPPORTED_VERSION, refused before its handler runs), a handler
that fails, at once, in its deferred answer or in its in-order work (UNKNOWN_SERVER_ERROR),
and a request the authorizer refuses (its handler never runs).

The failing handlers are stand-ins put in the route table for one test (no real request
makes a handler raise: that would be a bug of its own); everything else is the real
dispatcher, connection and handlers on real replicas and the in-memory quorum."""

from __future__ import annotations

import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest
import trio
import trio.testing
from broker_context import NODE_ID, middle
from served_connection import serving
from voter_context import answer, voter

from rillet.broker.config import NodeConfig
from rillet.broker.config.authorizer_config import AuthorizerConfig
from rillet.broker.dispatcher import HANDLERS, Dispatcher, PendingReply, Route
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.in_order import InOrder
from rillet.broker.network.connection import Connection
from rillet.broker.security.session import Session
from rillet.wire import group_messages as gm
from rillet.wire.acl_messages import CreateAclsRequest
from rillet.wire.acls import AclBinding, AclFilter, Operation, PatternType, Permission, ResourceType
from rillet.wire.api import ApiKey
from rillet.wire.cluster_messages import NodeAuthBeginRequest
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FrameDecoder, encode_frame
from rillet.wire.messages import (
    REQUEST_TYPES,
    ApiVersionsRequest,
    ApiVersionsResponse,
    CreateTopicsRequest,
    CreateTopicsResponse,
    NewTopic,
)
from rillet.wire.protocol import (
    PROTOCOL_VERSION,
    ErrorResponse,
    RequestHeader,
    decode_response,
    encode_request,
)
from rillet.wire.schema import to_wire

ALICE = Session("kafka", "10.0.0.1", "User:alice")


def refused(reply: object) -> tuple[int, ErrorCode | None]:
    assert isinstance(reply, PendingReply)
    return reply.correlation_id, reply.error


def test_an_api_the_node_does_not_route_is_unknown_api(tmp_path: Path) -> None:
    """The node handshake is answered by the connection before any dispatch: reaching the
    dispatcher, it is an api the dispatcher does not know."""
    d = Dispatcher(middle(tmp_path).ctx)
    reply = d.dispatch_request(3, NodeAuthBeginRequest("c", 2), ALICE)
    assert refused(reply) == (3, ErrorCode.UNKNOWN_API)
    assert isinstance(reply, PendingReply) and reply.error_message == "NODE_AUTH_BEGIN"


async def test_another_protocol_version_is_refused_before_the_handler_runs(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(1)
        d = Dispatcher(v.ctx)
        create = CreateTopicsRequest([NewTopic("t", 1)])
        header = RequestHeader(ApiKey.CREATE_TOPICS, PROTOCOL_VERSION + 1, 9, "old-client")
        reply = d.dispatch(header, create)
        assert refused(reply) == (9, ErrorCode.UNSUPPORTED_VERSION)
        assert isinstance(reply, PendingReply)
        assert (
            reply.error_message
            == f"version {PROTOCOL_VERSION + 1} of CREATE_TOPICS is not supported"
        )
        assert v.state.topic_by_name("t") is None
        same = d.dispatch(RequestHeader(ApiKey.CREATE_TOPICS, PROTOCOL_VERSION, 10, None), create)
        assert isinstance(same, PendingReply) and same.waiting is not None
        created = await same.waiting
        assert isinstance(created, CreateTopicsResponse)
        assert [t.error_code for t in created.topics] == [ErrorCode.NONE]


async def test_authorization_refusal_is_answered_and_the_handler_never_runs(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    config = NodeConfig(
        node_id=NODE_ID, data_dir=tmp_path, authorizer=AuthorizerConfig(True, "User:admin")
    )
    acl = AclBinding(
        ResourceType.TOPIC, "t", PatternType.LITERAL, "User:alice", "*", Operation.READ,
        Permission.ALLOW,
    )  # fmt: skip
    async with voter(tmp_path, config) as v:
        d = Dispatcher(v.ctx)
        reply = d.dispatch_request(4, CreateAclsRequest([acl]), ALICE)
        assert refused(reply) == (4, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
        assert v.state.acls.selected(AclFilter()) == []
        admin = Session("kafka", "10.0.0.2", "User:admin")
        allowed = d.dispatch_request(5, CreateAclsRequest([acl]), admin)
        assert isinstance(allowed, PendingReply) and allowed.error is None
        created = await answer(allowed.waiting)
        assert [r.error_code for r in created.results] == [ErrorCode.NONE]
        assert v.state.acls.selected(AclFilter()) == [acl]


def _raises(ctx: BrokerContext, req: gm.ListGroupsRequest) -> NoReturn:
    raise RuntimeError("a bug in a handler")


async def _fails_later() -> NoReturn:
    await trio.sleep(0.1)
    raise RuntimeError("a bug in a deferred answer")


FAILURES: dict[str, Callable[[BrokerContext, gm.ListGroupsRequest], object]] = {
    "at once": _raises,
    "in its deferred answer": lambda ctx, req: _fails_later(),
    # Work the connection finishes before its next request (a large or a transaction's
    # first produce): it closed the connection instead of answering.
    "in its in-order work": lambda ctx, req: InOrder(_fails_later()),
}


@pytest.mark.parametrize("how", FAILURES)
async def test_a_failing_handler_is_answered_and_the_connection_serves_on(
    tmp_path: Path,
    autojump_clock: trio.testing.MockClock,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    m = middle(tmp_path)
    monkeypatch.setitem(HANDLERS, ApiKey.LIST_GROUPS, Route(gm.ListGroupsRequest, FAILURES[how]))
    dispatcher = Dispatcher(m.ctx)
    async with serving(lambda stream: Connection(stream, dispatcher, 1 << 20, 8, 65536)) as connect:
        client = await connect()
        decoder = FrameDecoder()
        await _send(client, encode_request(1, gm.ListGroupsRequest(), "test"))
        failed = await _receive(client, decoder, gm.ListGroupsResponse)
        assert isinstance(failed, ErrorResponse)
        assert failed.error_code == ErrorCode.UNKNOWN_SERVER_ERROR
        await _send(client, encode_request(2, ApiVersionsRequest(), "test"))
        versions = await _receive(client, decoder, ApiVersionsResponse)
        assert isinstance(versions, ApiVersionsResponse) and versions.apis


async def test_a_wrong_version_over_a_connection_is_answered_and_it_serves_on(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    dispatcher = Dispatcher(m.ctx)
    blobs: list[Any] = []
    body = to_wire(ApiVersionsRequest(), blobs)
    header = {"api": int(ApiKey.API_VERSIONS), "version": PROTOCOL_VERSION + 7,
              "correlation_id": 1, "client_id": "future", "body": body}  # fmt: skip
    async with serving(lambda stream: Connection(stream, dispatcher, 1 << 20, 8, 65536)) as connect:
        client = await connect()
        decoder = FrameDecoder()
        await _send(client, encode_frame(header, blobs))
        answered = await _receive(client, decoder, ApiVersionsResponse)
        assert isinstance(answered, ErrorResponse)
        assert answered.error_code == ErrorCode.UNSUPPORTED_VERSION
        await _send(client, encode_request(2, ApiVersionsRequest(), "test"))
        assert isinstance(await _receive(client, decoder, ApiVersionsResponse), ApiVersionsResponse)


async def _send(client: trio.SocketStream, parts: list[Any]) -> None:
    await client.send_all(b"".join(bytes(p) for p in parts))


async def _receive(client: trio.SocketStream, decoder: FrameDecoder, kind: type) -> Any:
    with trio.fail_after(10):
        while (frame := decoder.next_frame()) is None:
            data = await client.receive_some(65536)
            assert data, "the connection closed"
            decoder.feed(data)
    return decode_response(frame, kind)


def _named_types(hint: object) -> set[object]:
    """Every class a return annotation names, however nested (unions, Deferred[...])."""
    found = {hint}
    for arg in typing.get_args(hint):
        found |= _named_types(arg)
    return found


def test_every_handler_answers_the_response_its_request_names() -> None:
    """The pairing is stated once, in each request's ``Request[R]`` base; every handler
    with an annotated answer must answer that R (a mismatch would reach the encoder)."""
    checked = 0
    for api, route in HANDLERS.items():
        handler = getattr(route, "handler", None)
        hints = typing.get_type_hints(handler) if handler is not None else {}
        if "return" not in hints:
            continue  # the SASL lambdas of a listener without SASL
        assert REQUEST_TYPES[api][1] in _named_types(hints["return"]), api.name
        checked += 1
    assert checked >= len(HANDLERS) - 3
