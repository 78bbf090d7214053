"""One client connection: a reader task and a writer task around the sans-I/O codec.

The reader decodes frames and dispatches each request immediately, so appends happen in the
order requests arrive. Replies go through a bounded channel to the writer, which waits for
each in turn and sends it: responses leave in request order, and the channel bound is the
per-connection limit on requests in flight (back-pressure on a client that pipelines too
much). Log bytes leave with ``os.sendfile``.

Bad input is contained here: an oversized frame or an unreadable header closes this one
connection; a malformed request with a readable correlation id gets INVALID_REQUEST.

Bytes are read within the node's request-bytes budget and the idle and frame deadlines
(broker/request_budget.py). Until a connection has logged in (SASL, a verified client
certificate or the node handshake) its frames are limited to sasl.server.max.receive.size
and only ApiVersions, the SASL apis and the node handshake are read: the api of any other
request closes the connection before its body is decoded. A large body is decoded off the
event loop (broker/decode_offload.py). Internal apis are served only after the node
handshake on this connection, and only for the node it proved to be (broker/node_handshake.py,
broker/internal_api_gate.py); a connection admitted on a node-reserve slot may do nothing
else until it has authenticated.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from functools import partial
from typing import Any

import trio

from rillet.broker.client_quotas import QuotaKind
from rillet.broker.connection_throttle import ConnectionThrottle
from rillet.broker.dispatcher import Dispatcher, PendingReply
from rillet.broker.errors import BrokerError
from rillet.broker.internal_api_gate import check_internal, refusal_response
from rillet.broker.node_handshake import NodeAuthServer
from rillet.broker.reply_writer import ReplyWriter, serve_connection
from rillet.broker.request_budget import (
    BudgetedReader,
    ReadClass,
    ReadDeadline,
    ReadPolicy,
    ReadTimers,
)
from rillet.broker.sasl.exchange import SaslExchange, credential_lookup
from rillet.broker.served_stream import ServedStream, peer_address, peer_certificate
from rillet.broker.session import ANONYMOUS, peer_session
from rillet.raft.peer_mac import NONCE_BYTES
from rillet.wire.api import ApiKey
from rillet.wire.cluster_messages import (
    NodeAuthBeginRequest,
    NodeAuthProveRequest,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.errors import FrameTooLarge, MalformedFrame, MalformedMessage
from rillet.wire.frame import BlobPart, FrameDecoder, parse_frame_body
from rillet.wire.messages import ApiVersionsRequest, FetchRequest, ProduceRequest
from rillet.wire.protocol import (
    RequestHeader,
    decode_request,
    encode_error_response,
    encode_response,
)
from rillet.wire.request_peek import peek_request_api
from rillet.wire.sasl_messages import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

log = logging.getLogger(__name__)

_CLOSE = object()  # the SASL gate's verdict: close the connection
# What a connection that has not logged in may ask: the login paths and ApiVersions.
PRE_AUTHENTICATION_APIS = frozenset(
    {
        ApiKey.API_VERSIONS,
        ApiKey.SASL_HANDSHAKE,
        ApiKey.SASL_AUTHENTICATE,
        ApiKey.NODE_AUTH_BEGIN,
        ApiKey.NODE_AUTH_PROVE,
    }
)


class Connection:
    def __init__(
        self,
        stream: ServedStream,
        dispatcher: Dispatcher,
        max_frame_bytes: int,
        max_in_flight: int,
        receive_bytes: int,
        policy: ReadPolicy | None = None,
        reserved: bool = False,
        on_node_authenticated: Callable[[], None] = lambda: None,
        sasl_mechanisms: tuple[str, ...] = (),
    ) -> None:
        """``reserved``: admitted beyond the client connection limits, so it may only run
        the node handshake (within the policy's deadline); ``on_node_authenticated`` is
        called once it has (the connection then no longer counts against those limits).
        ``sasl_mechanisms``: clients must authenticate with one of these first (nodes
        authenticate with the node handshake instead)."""
        self._stream = stream
        self._policy = policy or ReadPolicy.unlimited()
        self._reserved = reserved
        self._on_node_authenticated = on_node_authenticated
        self._dispatcher = dispatcher
        self._decoder = FrameDecoder(max_frame_bytes)
        self._max_frame_bytes = max_frame_bytes
        self._receive_bytes = receive_bytes
        self._max_in_flight = max_in_flight
        self.peer, peer_host = peer_address(stream)
        self.session = peer_session("native", peer_host, peer_certificate(stream))
        self._throttle = ConnectionThrottle(self._policy.quotas, self.session)
        self._sasl: SaslExchange | None = None
        self._logins = dispatcher.ctx.logins
        if sasl_mechanisms:
            metadata = dispatcher.ctx.metadata
            self._sasl = self._logins.exchange(
                sasl_mechanisms, credential_lookup(lambda: metadata.state.scram), self.session
            )
        # A verified client certificate authenticates too (SASL may still name the user).
        self._certified = self.session.principal != ANONYMOUS
        self._client_fetches: set[int] = set()  # correlation ids of consumer fetches
        auth = dispatcher.ctx.metadata.auth
        self._node_auth = NodeAuthServer(auth.handshake_key, auth.cluster_id)
        self._refusals_logged = 0
        self._reader = BudgetedReader(
            stream,
            self._policy.budget,
            receive_bytes,
            ReadTimers(
                self._policy.idle_timeout_s, self._policy.frame_timeout_s, trio.current_time()
            ),
            classify=self._read_class,
        )
        if reserved:
            self._reader.timers.must_authenticate_by = (
                trio.current_time() + self._policy.node_handshake_timeout_s
            )

    async def serve(self) -> None:
        """Serve until the peer closes, misbehaves or the node shuts down; never raises."""
        writer = ReplyWriter[PendingReply](
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
            f"connection {self.peer}",
            self._reader,
            self.session,
        )

    def _logged_in(self) -> bool:
        """As a node, or (on a client slot) by SASL or a verified certificate, or with no
        SASL on the listener."""
        if self._node_auth.node_id is not None:
            return True
        if self._reserved:
            return False
        return self._sasl is None or self._sasl.authenticated or self._certified

    def _read_class(self) -> ReadClass:
        if self._node_auth.node_id is not None:  # the cluster's own traffic: no budget
            return ReadClass(None, self._receive_bytes)
        principal = self.session.principal if self._logged_in() else None
        return self._policy.read_class(principal, self._receive_bytes)

    def _next_frame(self) -> bytes | None:
        """The next frame's bytes, within the limit of the connection's state; raises
        FrameTooLarge (close), and PermissionError for a request a connection that has not
        logged in may not make (close, its body not decoded)."""
        if self._logged_in():
            self._decoder.set_limit(self._max_frame_bytes, "max_frame_bytes")
            return self._decoder.next_frame_body()
        limit = self._policy.preauth_max_frame_bytes
        self._decoder.set_limit(limit, "sasl_server_max_receive_size before logging in")
        raw = self._decoder.next_frame_body()
        if raw is not None:
            api = peek_request_api(raw)
            if api not in PRE_AUTHENTICATION_APIS:
                raise _NotLoggedIn(f"api {api} before logging in")
        return raw

    async def _decode(self, raw: bytes) -> tuple[RequestHeader, Any]:
        """Header and body of a frame; a large one (not a produce: its records stay bytes)
        in a worker thread."""

        def decode() -> tuple[RequestHeader, Any]:
            return decode_request(parse_frame_body(raw))

        offload = self._policy.offload
        if offload.offloaded(len(raw)) and peek_request_api(raw) != ApiKey.PRODUCE:
            return await offload.run(len(raw), decode)
        return decode()

    def _charge_fetch(self, reply: PendingReply, parts: list[BlobPart]) -> None:
        if reply.correlation_id in self._client_fetches:
            self._client_fetches.discard(reply.correlation_id)
            self._throttle.charge_parts(QuotaKind.FETCH, parts)

    def _sasl_gate(self, correlation_id: int, body: Any) -> PendingReply | object | None:
        """SASL before anything else (but ApiVersions and the node handshake) from a client
        without a verified certificate: the answer to a SASL request, ``_CLOSE`` for another
        request before authentication or after a failure, None to serve the request."""
        sasl = self._sasl
        assert sasl is not None
        if sasl.failed:
            log.info("closing %s: a request after a failed SASL authentication", self.peer)
            return _CLOSE
        if type(body) is SaslHandshakeRequest:
            code = sasl.handshake(body.mechanism)
            answer: Any = SaslHandshakeResponse(code, list(sasl.mechanisms))
            return PendingReply(correlation_id, message=answer)
        if type(body) is SaslAuthenticateRequest:  # checked off the loop, in order
            return PendingReply(correlation_id, in_order=self._authenticate(body.auth_bytes))
        if not (sasl.authenticated or self._certified) and type(body) is not ApiVersionsRequest:
            log.info("closing %s: %s before SASL authentication", self.peer, type(body).__name__)
            return _CLOSE
        return None

    async def _authenticate(self, token: bytes) -> SaslAuthenticateResponse:
        assert self._sasl is not None
        step = await self._logins.authenticate(self._sasl, token, self.session)
        return SaslAuthenticateResponse(step.error_code, step.error_message, step.token)

    def _node_handshake(self, correlation_id: int, body: Any) -> PendingReply:
        """One step of the node handshake; a failed proof is logged at WARNING."""
        if type(body) is NodeAuthBeginRequest:
            answer: Any = self._node_auth.begin(body, secrets.token_bytes(NONCE_BYTES))
        else:
            answer = self._node_auth.prove(body)
            if self._node_auth.node_id is not None:
                self.session.node_id = self._node_auth.node_id
                log.debug(
                    "connection %s authenticated as node %d", self.peer, self._node_auth.node_id
                )
        refusal = self._node_auth.refusal
        if refusal is not None:
            log.warning("node handshake from %s refused: %s", self.peer, refusal.reason)
        return PendingReply(correlation_id, message=answer)

    def _refused_internal(self, correlation_id: int, body: Any) -> PendingReply | None:
        """An error reply for an internal request this connection may not make, else None."""
        refusal = check_internal(body, self._node_auth.node_id)
        if refusal is None:
            return None
        # Every refusal is a warning the first few times per connection, then debug: a
        # flood of forged requests must not flood the log.
        self._refusals_logged += 1
        level = logging.WARNING if self._refusals_logged <= 3 else logging.DEBUG
        log.log(level, "refused internal request from %s: %s", self.peer, refusal.reason)
        return PendingReply(correlation_id, message=refusal_response(body, refusal))

    async def _read_loop(self, writer: ReplyWriter[PendingReply]) -> None:
        while True:
            await self._throttle.wait()  # muted while over a byte-rate quota
            try:
                data = await self._reader.receive()
            except ReadDeadline as exc:
                log.log(
                    logging.INFO if exc.idle else logging.WARNING, "closing %s: %s", self.peer, exc
                )
                return
            if not data:
                return
            self._decoder.feed(data)
            frames = 0
            while True:
                try:
                    raw = self._next_frame()
                    if raw is None:
                        break
                    frames += 1
                    header, body = await self._decode(raw)
                except FrameTooLarge as exc:
                    log.warning("closing %s: %s", self.peer, exc)
                    return
                except _NotLoggedIn as exc:
                    log.info("closing %s: %s", self.peer, exc)
                    return
                except (MalformedFrame, MalformedMessage) as exc:
                    if exc.correlation_id is None:
                        log.warning("closing %s: unaddressable bad request: %s", self.peer, exc)
                        return
                    log.info("bad request from %s: %s", self.peer, exc)
                    await writer.put(_invalid(exc.correlation_id, str(exc)))
                    continue
                if type(body) in (NodeAuthBeginRequest, NodeAuthProveRequest):
                    await writer.put(self._node_handshake(header.correlation_id, body))
                    continue
                if self._sasl is not None and self.session.node_id is None:
                    gated = self._sasl_gate(header.correlation_id, body)
                    if isinstance(gated, PendingReply):
                        await gated.settle()  # a login's password check
                        await writer.put(gated)
                        continue
                    if gated is _CLOSE:
                        return
                if self._reserved:
                    log.warning(
                        "closing %s: a connection beyond the client limits sent %s before "
                        "authenticating as a node",
                        self.peer,
                        type(body).__name__,
                    )
                    return
                refused = self._refused_internal(header.correlation_id, body)
                if refused is not None:
                    await writer.put(refused)
                    continue
                if type(body) is ProduceRequest:
                    self._throttle.charge(
                        QuotaKind.PRODUCE, sum(len(r.records) for r in body.partitions)
                    )
                elif type(body) is FetchRequest and body.replica_id < 0:
                    self._client_fetches.add(header.correlation_id)
                reply = self._dispatcher.dispatch(header, body, self.session)
                if reply is not None:
                    if reply.in_order is not None:
                        await reply.settle()  # before the next request (handlers/in_order.py)
                    await writer.put(reply)
            self._reader.decoded(self._decoder.buffered_bytes, frames)


class _NotLoggedIn(BrokerError):
    """A request a connection that has not logged in may not make: close it."""


def _ready_parts(reply: PendingReply) -> list[BlobPart] | None:
    """The reply's frame parts if it needs no waiting, else None."""
    if reply.error is not None:
        return encode_error_response(reply.correlation_id, reply.error, reply.error_message)
    if reply.waiting is not None or reply.in_order is not None:
        return None
    return encode_response(reply.correlation_id, reply.message)


async def _materialize(reply: PendingReply) -> list[BlobPart]:
    """The reply's frame parts, once its deferred answer (if any) is complete."""
    if reply.error is not None or reply.waiting is None:
        parts = _ready_parts(reply)
        assert parts is not None  # in-order work was settled before the reply was put
        return parts
    try:
        message = await reply.waiting
    except Exception:
        log.exception("deferred handler failed")
        return encode_error_response(reply.correlation_id, ErrorCode.UNKNOWN_SERVER_ERROR)
    return encode_response(reply.correlation_id, message)


def _invalid(correlation_id: int, reason: str) -> PendingReply:
    return PendingReply(correlation_id, error=ErrorCode.INVALID_REQUEST, error_message=reason)


def _discard(reply: PendingReply) -> None:
    """Close the coroutine of a reply that will never be sent (connection gone)."""
    if reply.waiting is not None:
        reply.waiting.close()
