"""What a connection's loss means is registered on its Session by the request path (the
dispatcher) and run when the connection closes; the connection itself inspects nothing."""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path

import pytest
from broker_context import Middle, middle

from rillet.broker.dispatcher import Dispatcher
from rillet.broker.security.authorizer import Authorizer
from rillet.broker.security.request_authorization import RequestAuthorizer
from rillet.broker.security.session import MAX_CLOSE_ACTIONS, Session
from rillet.metadata_quorum.acl_registry import AclRegistry
from rillet.wire.api import ApiKey
from rillet.wire.cluster_messages import BrokerHeartbeatRequest
from rillet.wire.error_codes import ErrorCode
from rillet.wire.group_messages import ConsumerGroupHeartbeatRequest
from rillet.wire.messages import FetchPartition, FetchRequest
from rillet.wire.protocol import PROTOCOL_VERSION, RequestHeader


class RecordingDispatcher(Dispatcher):
    """The real dispatcher, with the three "connection lost" notices recorded."""

    def __init__(self, m: Middle) -> None:
        super().__init__(m.ctx)
        self.lost: list[tuple[str, object]] = []

    def broker_connection_lost(self, broker_id: int, broker_epoch: int) -> None:
        self.lost.append(("broker", (broker_id, broker_epoch)))

    def replica_connection_lost(self, replica_id: int) -> None:
        self.lost.append(("replica", replica_id))

    def members_connection_lost(self, members: set[tuple[str, str]]) -> None:
        self.lost.append(("members", sorted(members)))


def _header(api: ApiKey) -> RequestHeader:
    return RequestHeader(api, PROTOCOL_VERSION, 1, "test")


def _dispatch(d: Dispatcher, api: ApiKey, body: object, session: Session) -> None:
    """Dispatch and drop the answer (a waiting handler's coroutine is closed unrun)."""
    reply = d.dispatch(_header(api), body, session)
    waiting = getattr(reply, "waiting", None)
    if isinstance(waiting, Coroutine):
        waiting.close()


def _heartbeat(m: Middle, epoch: int, shutting_down: bool = False) -> BrokerHeartbeatRequest:
    auth = m.ctx.metadata.auth
    return BrokerHeartbeatRequest(auth.cluster_id, auth.token, 2, epoch, 0, True, shutting_down)


def test_session_actions_run_once_on_close_replaced_by_key_and_bounded() -> None:
    ran: list[str] = []
    s = Session("native", "127.0.0.1")
    assert s.on_close("a", lambda: ran.append("a1"), tag=1)
    assert s.on_close("a", lambda: ran.append("a2"), tag=2)  # replaces
    assert s.tag_of("a") == 2 and s.tag_of("b") is None
    s.on_close("b", lambda: ran.append("b"))
    s.forget("b")
    for i in range(MAX_CLOSE_ACTIONS - 1):
        assert s.on_close(i, lambda: None)
    assert not s.on_close("one too many", lambda: ran.append("no"))
    s.close()
    s.close()
    assert ran == ["a2"]


def test_a_heartbeat_connection_s_loss_reaches_the_controller(tmp_path: Path) -> None:
    m = middle(tmp_path)
    d = RecordingDispatcher(m)
    session = Session("native", "127.0.0.1", node_id=2)
    _dispatch(d, ApiKey.BROKER_HEARTBEAT, _heartbeat(m, 7), session)
    _dispatch(d, ApiKey.BROKER_HEARTBEAT, _heartbeat(m, 8), session)  # re-registered
    session.close()
    assert d.lost == [("broker", (2, 8))]


def test_a_broker_shutting_down_or_without_the_secret_is_not_reported(tmp_path: Path) -> None:
    m = middle(tmp_path)
    d = RecordingDispatcher(m)
    session = Session("native", "127.0.0.1", node_id=2)
    _dispatch(d, ApiKey.BROKER_HEARTBEAT, _heartbeat(m, 7), session)
    _dispatch(d, ApiKey.BROKER_HEARTBEAT, _heartbeat(m, 7, shutting_down=True), session)
    forged = BrokerHeartbeatRequest(m.ctx.metadata.auth.cluster_id, b"forged", 3, 1, 0, True)
    _dispatch(d, ApiKey.BROKER_HEARTBEAT, forged, session)
    session.close()
    assert d.lost == []


@pytest.mark.parametrize("replica_auth_ok", [True, False])
def test_a_follower_s_fetch_connection_loss_reaches_its_leaders(
    tmp_path: Path, replica_auth_ok: bool
) -> None:
    m = middle(tmp_path)
    d = RecordingDispatcher(m)
    session = Session("native", "127.0.0.1", node_id=2)
    proof = m.ctx.metadata.auth.token if replica_auth_ok else b"forged"
    fetch = FetchRequest(0, 1, 1 << 20, [FetchPartition("t", 0, 0, 1 << 20)], 2, proof)
    _dispatch(d, ApiKey.FETCH, fetch, session)
    session.close()
    assert d.lost == ([("replica", 2)] if replica_auth_ok else [])


def test_group_members_heartbeating_over_a_connection_expire_with_it(tmp_path: Path) -> None:
    m = middle(tmp_path)
    d = RecordingDispatcher(m)
    session = Session("native", "127.0.0.1")
    for member in ("m1", "m2", "m1", ""):  # "" is a join: no member yet
        d.dispatch(
            _header(ApiKey.CONSUMER_GROUP_HEARTBEAT),
            ConsumerGroupHeartbeatRequest("g", member, 10_000),
            session,
        )
    session.close()
    assert d.lost == [("members", [("g", "m1")]), ("members", [("g", "m2")])]


def test_a_refused_heartbeat_cannot_make_another_member_leave(tmp_path: Path) -> None:
    """A principal without READ on the group names a member of it: the heartbeat is refused
    before anything is registered, so closing the connection expires no one."""
    m = middle(tmp_path)
    d = RecordingDispatcher(m)
    d.authorization = RequestAuthorizer(Authorizer(frozenset()), AclRegistry)
    session = Session("kafka", "10.0.0.9", "User:mallory")
    reply = d.dispatch(
        _header(ApiKey.CONSUMER_GROUP_HEARTBEAT),
        ConsumerGroupHeartbeatRequest("g", "victim-member", 10_000),
        session,
    )
    assert reply is not None and reply.error == ErrorCode.GROUP_AUTHORIZATION_FAILED
    session.close()
    assert d.lost == []
