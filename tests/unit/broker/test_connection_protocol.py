"""The connection protocol, bytes in and actions out, without sockets, a clock or a node:
both listeners' front ends (Kafka requests encoded by kafka-python, the independent
oracle; native requests by rillet's codec), the pre-authentication limits, SASL, the node
handshake and the internal-API gate, quotas, acks=0 and the reasons a connection closes."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from kafka.protocol.metadata import ApiVersionsRequest as KafkaApiVersions
from kafka.protocol.metadata import MetadataRequest as KafkaMetadata
from kafka.protocol.producer import ProduceRequest as KafkaProduce
from kafka.protocol.sasl import SaslAuthenticateRequest as KafkaSaslAuthenticate
from kafka.protocol.sasl import SaslAuthenticateResponse as KafkaSaslAuthenticateResponse
from kafka.protocol.sasl import SaslHandshakeRequest as KafkaSaslHandshake
from kafka.protocol.sasl import SaslHandshakeResponse as KafkaSaslHandshakeResponse
from kafka_front_end import StaticView

from rillet.broker.cluster.node_handshake import NodeAuthClient, NodeAuthServer
from rillet.broker.dispatcher import PendingReply
from rillet.broker.handlers.unanswered import Unanswered
from rillet.broker.kafka.listener_front_end import KafkaFrontEnd
from rillet.broker.network.client_quotas import ByteRates, ClientQuotas
from rillet.broker.network.connection_events import (
    Action,
    Close,
    CloseConnection,
    Dispatch,
    Login,
    NodeAuthenticated,
    Send,
)
from rillet.broker.network.connection_protocol import ConnectionProtocol
from rillet.broker.network.native_front_end import NativeFrontEnd
from rillet.broker.network.read_shares import ReadShares, RequestBytesBudget
from rillet.broker.network.request_budget import ReadPolicy
from rillet.broker.security.sasl.exchange import PasswordCheck, SaslExchange
from rillet.broker.security.sasl.scram import ScramCredential, make_credential
from rillet.broker.security.session import Session
from rillet.raft.peer_mac import NONCE_BYTES
from rillet.wire import cluster_messages as cm
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FrameDecoder, parse_frame_body
from rillet.wire.messages import (
    ApiVersionsRequest,
    FetchRequest,
    FetchResponse,
    MetadataRequest,
    MetadataResponse,
)
from rillet.wire.protocol import decode_response, encode_request

NOW_S = 1_000.0
PREAUTH_BYTES = 4096
KEY = b"k" * 32
CLUSTER = "cluster-1"
UNAUTHENTICATED = RequestBytesBudget(10_000)


def lookup(user: str, mechanism: str) -> ScramCredential | None:
    """alice's password is "secret"."""
    return make_credential(mechanism, "secret") if user == "alice" else None


def policy(quotas: ClientQuotas | None = None) -> ReadPolicy:
    base = ReadPolicy.unlimited()
    shares = ReadShares(base.budget, 1 << 20, UNAUTHENTICATED)
    return dataclasses.replace(
        base, quotas=quotas, shares=shares, preauth_max_frame_bytes=PREAUTH_BYTES
    )


def kafka_protocol(
    sasl: bool = True, quotas: ClientQuotas | None = None, principal: str | None = None
) -> ConnectionProtocol:
    session = Session("kafka", "10.0.0.1")
    if principal is not None:
        session.principal = principal  # as a verified client certificate names it
    exchange = SaslExchange(("PLAIN",), lookup, session, KEY) if sasl else None
    front_end = KafkaFrontEnd(1 << 20, StaticView(), "10.0.0.1", 1 << 20)
    return ConnectionProtocol(front_end, session, policy(quotas), 1 << 20, 65536, exchange)


def native_protocol(
    sasl: bool = False, reserved: bool = False, principal: str | None = None
) -> ConnectionProtocol:
    session = Session("native", "10.0.0.2")
    if principal is not None:
        session.principal = principal
    exchange = SaslExchange(("PLAIN",), lookup, session, KEY) if sasl else None
    return ConnectionProtocol(
        NativeFrontEnd(1 << 20), session, policy(), 1 << 20, 65536, exchange,
        NodeAuthServer(KEY, CLUSTER), reserved, nonce=lambda: b"n" * NONCE_BYTES,
    )  # fmt: skip


def kafka_request(request: Any, version: int, correlation_id: int = 7) -> bytes:
    request.with_header(correlation_id=correlation_id, client_id="oracle")
    return bytes(request.encode(version=version, header=True, framed=True))


def native_request(request: Any, correlation_id: int = 7) -> bytes:
    return b"".join(bytes(p) for p in encode_request(correlation_id, request, "test"))  # type: ignore[arg-type]


def receive(protocol: ConnectionProtocol, data: bytes) -> list[Action]:
    """Bytes in, actions out: each whole frame decoded and served, as the driver does
    (a Dispatch or Login is returned, not followed)."""
    protocol.receive_data(data)
    actions: list[Action] = []
    while (frame := protocol.next_frame()) is not None:
        if isinstance(frame, Close):
            return [*actions, frame]
        try:
            request = protocol.front_end.decode(frame.data)
        except CloseConnection as exc:
            return [*actions, Close(str(exc), exc.level)]
        actions.append(protocol.decoded(request, NOW_S))
    return actions


def one(protocol: ConnectionProtocol, data: bytes) -> Action:
    (action,) = receive(protocol, data)
    return action


def sent_bytes(action: Action) -> bytes:
    assert isinstance(action, Send | NodeAuthenticated) and action.out.parts is not None
    return b"".join(bytes(p) for p in action.out.parts)  # type: ignore[arg-type]


def native_answer(action: Action, response_type: type) -> Any:
    decoder = FrameDecoder()
    decoder.feed(sent_bytes(action))
    body = decoder.next_frame_body()
    assert body is not None
    return decode_response(parse_frame_body(body), response_type)


def login(protocol: ConnectionProtocol, action: Action) -> Send:
    """Run a Login's password check here (as the node's guard does on a worker thread)."""
    assert isinstance(action, Login)
    step = action.exchange.authenticate(action.token)
    if isinstance(step, PasswordCheck):
        step = action.exchange.checked(step.run())
    return protocol.logged_in_step(action, step)


def kafka_login(protocol: ConnectionProtocol, password: str) -> int:
    """A PLAIN login over the Kafka front end; the SaslAuthenticate answer's error code."""
    handshake = one(protocol, kafka_request(KafkaSaslHandshake(mechanism="PLAIN"), 1))
    answer = KafkaSaslHandshakeResponse.decode(
        sent_bytes(handshake), version=1, header=True, framed=True
    )
    assert answer.error_code == 0 and list(answer.mechanisms) == ["PLAIN"]
    token = f"\0alice\0{password}".encode()
    action = one(protocol, kafka_request(KafkaSaslAuthenticate(auth_bytes=token), 1))
    done = KafkaSaslAuthenticateResponse.decode(
        sent_bytes(login(protocol, action)), version=1, header=True, framed=True
    )
    return int(done.error_code)


def metadata_v1(topics: int = 1) -> bytes:
    named = [KafkaMetadata.MetadataRequestTopic(name=f"t{i}") for i in range(topics)]
    request = KafkaMetadata(topics=named)
    return kafka_request(request, 1)


def produce(acks: int, records: bytes = b"x" * 100) -> bytes:
    r = KafkaProduce
    request = r(
        transactional_id=None,
        acks=acks,
        timeout_ms=100,
        topic_data=[
            r.TopicProduceData(
                name="t",
                partition_data=[r.TopicProduceData.PartitionProduceData(index=0, records=records)],
            )
        ],
    )
    return kafka_request(request, 3)


# -- pre-authentication limits -------------------------------------------------------------


def test_a_frame_over_the_preauth_limit_closes_before_its_bytes_arrive() -> None:
    for protocol, header in ((kafka_protocol(), b""), (native_protocol(sasl=True), b"")):
        size = PREAUTH_BYTES + 1
        (close,) = receive(protocol, header + size.to_bytes(4, "big"))  # only the size
        assert isinstance(close, Close)
        assert "sasl_server_max_receive_size" in close.reason


def test_after_login_the_frame_limit_is_max_frame_bytes() -> None:
    protocol = kafka_protocol()
    assert kafka_login(protocol, "secret") == 0
    assert protocol.logged_in()
    action = one(protocol, metadata_v1(topics=1_000))  # ~6 KB: over the pre-auth limit
    assert isinstance(action, Dispatch)
    body = action.request.body
    assert isinstance(body, MetadataRequest) and body.topics == [f"t{i}" for i in range(1_000)]


def test_before_login_only_api_versions_and_sasl_are_read_the_rest_closes_unread() -> None:
    protocol = kafka_protocol()
    body_never_decoded = metadata_v1()[:-3] + b"\xff\xff\xff"
    frame = protocol.front_end
    protocol.receive_data(body_never_decoded)
    close = protocol.next_frame()  # judged by the header: the body is not decoded
    assert isinstance(close, Close) and close.level == logging.INFO
    assert close.reason == "api 3 before logging in"
    assert frame.pending_bytes == 0
    native = native_protocol(sasl=True)
    close = one(native, native_request(MetadataRequest(["t"])))
    assert isinstance(close, Close) and "before logging in" in close.reason


def test_api_versions_is_answered_before_login_and_a_version_above_ours_gets_the_table() -> None:
    protocol = kafka_protocol()
    assert isinstance(one(protocol, kafka_request(KafkaApiVersions(), 0)), Send)
    too_new = bytearray(kafka_request(KafkaApiVersions(), 0))
    too_new[6:8] = (99).to_bytes(2, "big")  # the header's version
    answer = sent_bytes(one(protocol, bytes(too_new)))
    assert int.from_bytes(answer[8:10], "big") == ErrorCode.UNSUPPORTED_VERSION


def test_strangers_read_from_their_own_budget_in_small_chunks() -> None:
    protocol = kafka_protocol()
    stranger = protocol.read_class()
    assert stranger.budget is UNAUTHENTICATED and stranger.chunk_bytes == PREAUTH_BYTES + 4
    assert kafka_login(protocol, "secret") == 0
    known = protocol.read_class()
    assert known.budget is not UNAUTHENTICATED and known.chunk_bytes == 65536
    assert kafka_protocol(sasl=False).read_class().budget is not UNAUTHENTICATED


def test_a_certificate_logs_in_on_the_native_listener_only() -> None:
    assert native_protocol(sasl=True, principal="User:CN=app").logged_in()
    assert not kafka_protocol(principal="User:CN=app").logged_in()


# -- SASL ----------------------------------------------------------------------------------


def test_a_failed_login_is_answered_then_the_next_request_closes() -> None:
    protocol = kafka_protocol()
    assert kafka_login(protocol, "wrong") == ErrorCode.AUTHENTICATION_FAILED
    assert not protocol.logged_in()
    close = one(protocol, kafka_request(KafkaApiVersions(), 0))
    assert isinstance(close, Close) and "failed SASL authentication" in close.reason


def test_a_native_login_names_the_principal() -> None:
    protocol = native_protocol(sasl=True)
    from rillet.wire.sasl_messages import (
        SaslAuthenticateRequest,
        SaslAuthenticateResponse,
        SaslHandshakeRequest,
        SaslHandshakeResponse,
    )

    answer = native_answer(
        one(protocol, native_request(SaslHandshakeRequest("PLAIN"))), SaslHandshakeResponse
    )
    assert answer == SaslHandshakeResponse(ErrorCode.NONE, ["PLAIN"])
    action = one(protocol, native_request(SaslAuthenticateRequest(b"\0alice\0secret")))
    done = native_answer(login(protocol, action), SaslAuthenticateResponse)
    assert done.error_code == ErrorCode.NONE
    assert protocol.session.principal == "User:alice" and protocol.logged_in()
    assert isinstance(one(protocol, native_request(MetadataRequest(["t"]))), Dispatch)


def test_a_listener_without_sasl_sends_sasl_requests_to_the_dispatcher() -> None:
    action = one(kafka_protocol(sasl=False), kafka_request(KafkaSaslHandshake(mechanism="X"), 1))
    assert isinstance(action, Dispatch)


# -- node handshake and internal apis ------------------------------------------------------


def handshake(protocol: ConnectionProtocol, node_id: int) -> Action:
    client = NodeAuthClient(KEY, CLUSTER, node_id, b"c" * NONCE_BYTES)
    begun = one(protocol, native_request(client.begin()))
    answer = native_answer(begun, cm.NodeAuthBeginResponse)
    return one(protocol, native_request(client.prove(answer)))


def heartbeat_of(broker_id: int) -> cm.BrokerHeartbeatRequest:
    return cm.BrokerHeartbeatRequest(CLUSTER, b"", broker_id, 5, 0, False)


def test_internal_requests_need_the_node_handshake_and_only_as_that_node() -> None:
    protocol = native_protocol()
    heartbeat = heartbeat_of(2)
    refused = one(protocol, native_request(heartbeat))
    assert native_answer(refused, cm.BrokerHeartbeatResponse).error_code == (
        ErrorCode.AUTHENTICATION_FAILED
    )
    assert isinstance(handshake(protocol, 2), NodeAuthenticated)
    assert protocol.session.node_id == 2 and protocol.read_class().budget is None
    assert isinstance(one(protocol, native_request(heartbeat)), Dispatch)
    as_other = one(protocol, native_request(heartbeat_of(3)))
    assert native_answer(as_other, cm.BrokerHeartbeatResponse).error_code == (
        ErrorCode.AUTHORIZATION_FAILED
    )


def test_a_reserved_connection_may_only_run_the_node_handshake() -> None:
    close = one(native_protocol(reserved=True), native_request(ApiVersionsRequest()))
    assert isinstance(close, Close) and "beyond the client limits" in close.reason
    protocol = native_protocol(reserved=True)
    assert not protocol.logged_in()
    assert isinstance(handshake(protocol, 4), NodeAuthenticated)
    assert isinstance(one(protocol, native_request(ApiVersionsRequest())), Dispatch)


def test_malformed_native_requests_get_an_error_or_close_when_unaddressable() -> None:
    protocol = native_protocol()
    wrong_version = bytearray(native_request(ApiVersionsRequest()))
    at = wrong_version.index(b"gversion") + len(b"gversion")
    wrong_version[at] = 0x05  # version 5 (CBOR small int)
    answer = sent_bytes(one(protocol, bytes(wrong_version)))
    assert b"not supported" in answer
    close = one(protocol, b"\0\0\0\x02\x01\x02")
    assert isinstance(close, Close) and "unaddressable" in close.reason


# -- quotas, acks=0 and answers ------------------------------------------------------------


def test_a_produce_over_its_quota_mutes_the_connection_and_tells_the_client() -> None:
    quotas = ClientQuotas(ByteRates(producer_byte_rate=100))
    protocol = kafka_protocol(sasl=False, quotas=quotas)
    action = one(protocol, produce(acks=1, records=b"x" * 1_000))
    assert isinstance(action, Dispatch) and action.throttle_ms > 0
    assert protocol.muted_until_s == NOW_S + action.throttle_ms / 1000
    send = protocol.dispatched(action, PendingReply(7, error=ErrorCode.NOT_LEADER_OR_FOLLOWER))
    assert isinstance(send, Send) and send.out.throttle_ms == action.throttle_ms


def test_a_consumer_fetch_answer_is_charged_as_it_is_sent() -> None:
    protocol = native_protocol()
    quotas = ClientQuotas(ByteRates(consumer_byte_rate=10))
    protocol.throttle = type(protocol.throttle)(quotas, protocol.session)
    action = one(protocol, native_request(FetchRequest(0, 1, 1 << 20, [])))
    assert isinstance(action, Dispatch)
    send = protocol.dispatched(action, PendingReply(7, message=FetchResponse([])))
    assert isinstance(send, Send) and send.out.fetch_quota
    protocol.sent(send.out, [b"x" * 1_000], NOW_S)
    assert protocol.muted_until_s > NOW_S


def test_acks_0_gets_no_answer_and_a_failure_closes_the_kafka_connection() -> None:
    protocol = kafka_protocol(sasl=False)
    action = one(protocol, produce(acks=0))
    assert isinstance(action, Dispatch) and action.request.unanswered
    assert action.request.body.acks == 0  # type: ignore[attr-defined]
    assert protocol.dispatched(action, Unanswered()) is None
    close = protocol.dispatched(action, Unanswered("acks=0 produce failed (t-0: 6)"))
    assert isinstance(close, Close) and "t-0" in close.reason
    refused = protocol.dispatched(action, PendingReply(7, error=ErrorCode.AUTHORIZATION_FAILED))
    assert isinstance(refused, Close) and "AUTHORIZATION_FAILED" in refused.reason


def test_a_native_unanswered_produce_keeps_the_connection() -> None:
    protocol = native_protocol()
    action = one(protocol, native_request(MetadataRequest(["t"])))
    assert isinstance(action, Dispatch)
    assert protocol.dispatched(action, Unanswered("t-0 failed")) is None


def test_unsupported_and_undecodable_kafka_requests_close_the_connection() -> None:
    unsupported = bytearray(metadata_v1())
    unsupported[6:8] = (99).to_bytes(2, "big")
    close = one(kafka_protocol(sasl=False), bytes(unsupported))
    assert isinstance(close, Close) and "not served" in close.reason
    truncated = metadata_v1()[:-2]
    truncated = (len(truncated) - 4).to_bytes(4, "big") + truncated[4:]
    close = one(kafka_protocol(sasl=False), truncated)
    assert isinstance(close, Close) and close.level == logging.WARNING


def test_a_dispatched_answer_is_encoded_by_its_front_end() -> None:
    protocol = kafka_protocol(sasl=False)
    action = one(protocol, metadata_v1())
    assert isinstance(action, Dispatch)
    send = protocol.dispatched(action, PendingReply(7, message=MetadataResponse("c", 1, [], [])))
    assert isinstance(send, Send) and send.out.pending is not None
    assert send.out.encoder.answer(7, send.out.pending.message, 0)[0][4:8] == b"\0\0\0\x07"
