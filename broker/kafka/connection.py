"""One Kafka client connection: a reader task and a writer task around the sans-I/O front end.

Like the native connection, the reader dispatches each request as it arrives (appends happen
in arrival order) and the writer sends replies in request order through a bounded channel
(the in-flight limit). An acks=0 produce gets no response; when one of its partitions
failed (a moved leader, say), the connection is closed so the client refreshes its
metadata, as Kafka does. Bad input closes this connection with a logged reason, as Kafka
does: a frame over the size limit, an unreadable header, an api or version not served, a
body that does not decode. Before a SASL login the frame limit is sasl.server.max.receive.size
and only ApiVersions and the SASL apis are read: the header of any other request closes the
connection before its body is decoded. A large body is decoded off the event loop
(broker/decode_offload.py). An ApiVersions request of a version above ours is answered in v0 format
with UNSUPPORTED_VERSION and our table, so the client can retry within it.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from functools import partial
from typing import Any

import trio

from rillet.broker.client_quotas import QuotaKind
from rillet.broker.config import NodeConfig
from rillet.broker.connection_throttle import ConnectionThrottle
from rillet.broker.decode_offload import DecodeOffload
from rillet.broker.dispatcher import Dispatcher, PendingReply
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.kafka.api_table import ApiSchema, api_name
from rillet.broker.kafka.codec import (
    KafkaRequestHeader,
    decode_body,
    decode_header,
    encode_response,
    frame_parts,
    schema_for,
    unsupported_api_versions,
)
from rillet.broker.kafka.entities import with_throttle_time
from rillet.broker.kafka.errors import (
    AcksZeroFailure,
    KafkaProtocolError,
    MalformedKafkaRequest,
    UnsupportedKafkaRequest,
)
from rillet.broker.kafka.fetch_sessions import FetchSessionCache
from rillet.broker.kafka.framing import KafkaFrameDecoder
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import Answer, Caller, Forward, KafkaEndpoint, RawBody
from rillet.broker.reply_writer import ReplyWriter, serve_connection
from rillet.broker.request_budget import (
    BudgetedReader,
    ReadClass,
    ReadDeadline,
    ReadPolicy,
    ReadTimers,
)
from rillet.broker.sasl.kafka_gate import KafkaSaslGate, SaslRequired, credential_lookup
from rillet.broker.served_stream import ServedStream, peer_address, peer_certificate
from rillet.broker.session import peer_session
from rillet.broker.topic_config import topic_config_defaults
from rillet.wire.api import ApiKey
from rillet.wire.frame import BlobPart
from rillet.wire.messages import API_OF_REQUEST
from rillet.wire.protocol import PROTOCOL_VERSION, RequestHeader

log = logging.getLogger(__name__)


class BrokerClusterView:
    """Live brokers' Kafka listeners, from the node's committed metadata."""

    def __init__(self, ctx: BrokerContext) -> None:
        self._ctx = ctx

    def kafka_endpoints(self) -> dict[int, KafkaEndpoint]:
        return {
            b.broker_id: KafkaEndpoint(b.broker_id, b.kafka_host, b.kafka_port, b.rack)
            for b in self._ctx.metadata.state.brokers.values()
            if not b.fenced and b.kafka_port >= 0
        }

    def topic_names(self) -> list[str]:
        return sorted(self._ctx.metadata.state.topic_ids)

    def node_config(self) -> NodeConfig:
        return self._ctx.config

    def fetch_sessions(self) -> FetchSessionCache:
        return self._ctx.kafka_fetch_sessions

    def now_ms(self) -> int:
        return self._ctx.now_ms()

    def topic_config_defaults(self) -> dict[str, str]:
        cfg = self._ctx.config
        return topic_config_defaults(cfg.log, cfg.replication.default_min_insync_replicas)


@dataclass(slots=True)
class _Reply:
    correlation_id: int
    schema: ApiSchema | None = None
    forward: Forward | None = None
    pending: PendingReply | None = None
    ready: bytes | None = None  # an answer encoded already
    throttle_ms: int = 0  # the produce quota's wait, told to the client in the answer
    login: Coroutine[Any, Any, Any] | None = None  # a SASL answer, awaited in order
    # Answered in a worker thread (a large request: its answer is as large to build).
    offload: DecodeOffload | None = None


class KafkaConnection:
    def __init__(
        self,
        stream: ServedStream,
        dispatcher: Dispatcher,
        max_frame_bytes: int,
        max_in_flight: int,
        receive_bytes: int,
        policy: ReadPolicy | None = None,
        sasl_mechanisms: tuple[str, ...] = (),
    ) -> None:
        """``sasl_mechanisms``: clients must authenticate with one of these first."""
        self._stream = stream
        self._dispatcher = dispatcher
        self._view = BrokerClusterView(dispatcher.ctx)
        self._decoder = KafkaFrameDecoder(max_frame_bytes)
        self._max_frame_bytes = max_frame_bytes
        self._max_in_flight = max_in_flight
        self._receive_bytes = receive_bytes
        self.peer, self._peer_host = peer_address(stream)
        self.session = peer_session("kafka", self._peer_host, peer_certificate(stream))
        self._policy = policy = policy or ReadPolicy.unlimited()
        self._throttle = ConnectionThrottle(policy.quotas, self.session)
        timers = ReadTimers(policy.idle_timeout_s, policy.frame_timeout_s, trio.current_time())
        self._reader = BudgetedReader(
            stream, policy.budget, receive_bytes, timers, classify=self._read_class
        )
        self._sasl: KafkaSaslGate | None = None
        if sasl_mechanisms:
            metadata = dispatcher.ctx.metadata
            self._sasl = KafkaSaslGate(
                sasl_mechanisms,
                credential_lookup(lambda: metadata.state.scram),
                self.session,
                dispatcher.ctx.logins,
            )

    async def serve(self) -> None:
        """Serve until the peer closes, misbehaves or the node shuts down; never raises."""
        writer = ReplyWriter[_Reply](
            self._stream,
            self._max_in_flight,
            _materialize,
            _ready_parts,
            self._charge_fetch,
            _discard,
        )
        await serve_connection(
            writer,
            partial(self._read_loop, writer),
            f"kafka connection {self.peer}",
            self._reader,
            self.session,
        )

    def _logged_in(self) -> bool:
        return self._sasl is None or self._sasl.authenticated

    def _read_class(self) -> ReadClass:
        principal = self.session.principal if self._logged_in() else None
        return self._policy.read_class(principal, self._receive_bytes)

    def _set_frame_limit(self) -> None:
        if self._logged_in():
            self._decoder.set_limit(self._max_frame_bytes, "max_frame_bytes")
        else:
            limit = self._policy.preauth_max_frame_bytes
            self._decoder.set_limit(limit, "sasl_server_max_receive_size before SASL login")

    def _charge_fetch(self, reply: _Reply, parts: list[BlobPart]) -> None:
        if reply.schema is not None and reply.schema.api_key == ApiKey.FETCH:
            self._throttle.charge_parts(QuotaKind.FETCH, parts)

    async def _read_loop(self, writer: ReplyWriter[_Reply]) -> None:
        while True:
            await self._throttle.wait()  # muted while over a byte-rate quota
            try:
                data = await self._reader.receive()  # the node's budget and deadlines
            except ReadDeadline as exc:
                level = logging.INFO if exc.idle else logging.WARNING
                log.log(level, "closing kafka connection %s: %s", self.peer, exc)
                return
            if not data:
                return
            self._decoder.feed(data)
            frames = 0
            while True:
                try:
                    self._set_frame_limit()
                    frame = self._decoder.next_frame()
                    if frame is None:
                        break
                    frames += 1
                    reply = await self._handle(frame)
                except AcksZeroFailure as exc:
                    log.info("closing kafka connection %s: %s", self.peer, exc)
                    return
                except KafkaProtocolError as exc:
                    log.warning("closing kafka connection %s: %s", self.peer, exc)
                    return
                if reply is not None:
                    if reply.login is not None and reply.schema is not None:  # off the loop
                        reply.ready = _encode(reply.correlation_id, reply.schema, await reply.login)
                    if reply.pending is not None and reply.pending.in_order is not None:
                        await reply.pending.settle()  # before the next request
                    await writer.put(reply)
            self._reader.decoded(self._decoder.pending_bytes, frames)

    async def _handle(self, frame: bytes) -> _Reply | None:
        header, body_start = decode_header(frame)
        cid = header.correlation_id
        try:
            schema = schema_for(header)
        except UnsupportedKafkaRequest:
            if header.api_key == ApiKey.API_VERSIONS:
                return _Reply(cid, ready=unsupported_api_versions(cid))
            raise
        if self._sasl is not None:
            try:
                self._sasl.admit(header.api_key)  # before a byte of the body is decoded
            except SaslRequired as exc:
                raise MalformedKafkaRequest(str(exc)) from None
        decode = partial(decode_body, frame, body_start, schema)
        if header.api_key == ApiKey.PRODUCE:  # records stay bytes: cheap at any size
            request = decode()
        else:
            request = await self._policy.offload.run(len(frame), decode)
        return self._serve(frame, header, schema, request)

    def _serve(
        self, frame: bytes, header: KafkaRequestHeader, schema: ApiSchema, request: Any
    ) -> _Reply | None:
        cid = header.correlation_id
        if self._sasl is not None:
            try:
                answer = self._sasl.handle(schema, request)
            except SaslRequired as exc:
                raise MalformedKafkaRequest(str(exc)) from None
            if isinstance(answer, Coroutine):  # a password check: before the next request
                return _Reply(cid, schema, login=answer)
            if answer is not None:
                return _Reply(cid, schema, ready=_encode(cid, schema, answer))
        action = translate(schema, request, self._view, Caller(header.client_id, self._peer_host))
        if isinstance(action, Answer):
            return _Reply(cid, schema, ready=_encode(cid, schema, action.response))
        # The internal api of the translated request: Kafka's LeaveGroup, DescribeGroups and
        # ListGroups map to the classic groups' internal apis, not the native ones.
        native_api = API_OF_REQUEST[type(action.native)]
        native_header = RequestHeader(native_api, PROTOCOL_VERSION, cid, header.client_id)
        pending = self._dispatcher.dispatch(native_header, action.native, self.session)
        throttle_ms = 0
        if schema.api_key == ApiKey.PRODUCE:
            throttle_ms = self._throttle.charge(QuotaKind.PRODUCE, len(frame))
        if action.failed is not None:  # acks=0: no response; a failure closes the connection
            _close_if_failed(action, pending)
            return None
        if pending is None:
            return None
        offload = self._policy.offload
        # A fetch's answer updates its fetch session: on the event loop, never in a thread.
        big = offload.offloaded(len(frame)) and schema.api_key not in (ApiKey.PRODUCE, ApiKey.FETCH)
        return _Reply(
            cid, schema, action, pending, throttle_ms=throttle_ms, offload=offload if big else None
        )


def _close_if_failed(action: Forward, pending: PendingReply | None) -> None:
    assert action.failed is not None
    if pending is None or pending.waiting is not None:  # never for an acks=1 append
        if pending is not None and pending.waiting is not None:
            pending.waiting.close()
        raise AcksZeroFailure("acks=0 produce got no synchronous answer")
    if pending.error is not None:
        raise AcksZeroFailure(f"acks=0 produce failed: {pending.error.name}")
    reason = action.failed(pending.message)
    if reason is not None:
        raise AcksZeroFailure(reason)


def _encode(cid: int, schema: ApiSchema, response: Any) -> bytes:
    return encode_response(cid, schema, response)


def _ready_parts(reply: _Reply) -> list[BlobPart] | None:
    """The reply's frame parts if it needs no waiting (nor a worker thread), else None."""
    if reply.ready is not None:
        return [reply.ready]
    pending = reply.pending
    assert pending is not None
    if reply.offload is not None:
        return None
    if pending.error is None and (pending.waiting is not None or pending.in_order is not None):
        return None
    return _answer_parts(reply, pending.message)


async def _materialize(reply: _Reply) -> list[BlobPart]:
    """The reply's frame parts, once its deferred answer (if any) is complete; the answer
    to a large request is built and encoded in a worker thread."""
    pending, offload = reply.pending, reply.offload
    ready = pending is None or pending.error is not None or pending.waiting is None
    if pending is None or (ready and offload is None):
        parts = _ready_parts(reply)
        assert parts is not None  # in-order work was settled before the reply was put
        return parts
    message = pending.message
    if pending.error is None and pending.waiting is not None:
        try:
            message = await pending.waiting
        except Exception:
            assert reply.schema is not None
            log.exception("kafka %s answer failed", api_name(reply.schema.api_key))
            return _failed_parts(reply, -1)
    if offload is None:
        return _answer_parts(reply, message)
    return await offload.run(offload.threshold_bytes, partial(_answer_parts, reply, message))


def _answer_parts(reply: _Reply, message: Any) -> list[BlobPart]:
    """The Kafka answer to the native ``message`` (or to the pending reply's error)."""
    assert reply.forward is not None and reply.pending is not None and reply.schema is not None
    forward, pending = reply.forward, reply.pending
    if pending.error is not None:
        return _response_parts(reply, forward.fail(int(pending.error)))
    try:
        response = forward.reply(message)
    except Exception:
        log.exception("kafka %s answer failed", api_name(reply.schema.api_key))
        return _failed_parts(reply, -1)
    return _response_parts(reply, response)


def _failed_parts(reply: _Reply, error_code: int) -> list[BlobPart]:
    assert reply.forward is not None
    return _response_parts(reply, reply.forward.fail(error_code))


def _response_parts(reply: _Reply, response: Any) -> list[BlobPart]:
    assert reply.schema is not None
    if isinstance(response, RawBody):
        return frame_parts(reply.correlation_id, response.parts)
    if reply.throttle_ms:
        response = with_throttle_time(response, reply.throttle_ms)
    return [encode_response(reply.correlation_id, reply.schema, response)]


def _discard(reply: _Reply) -> None:
    """Close the coroutine of a reply that will never be sent (connection gone)."""
    if reply.login is not None:
        reply.login.close()
    if reply.pending is not None and reply.pending.waiting is not None:
        reply.pending.waiting.close()
