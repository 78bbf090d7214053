"""One client connection's protocol, whichever listener it came in on (sans-I/O).

h11's shape: the driver (broker/network/connection.py) feeds received bytes in and gets events and
actions out; this object owns every decision between a byte and the dispatcher, the same
for the native and the Kafka listener:

- framing limits: a frame over ``max_frame_bytes`` (over ``sasl_server_max_receive_size``
  before logging in) closes the connection before its bytes are buffered;
- the pre-authentication phase: before logging in only the front end's login apis (and
  ApiVersions) are read, judged by the header before the body is decoded; a request after
  a failed SASL login closes the connection;
- the node handshake (native listener) and the SASL exchange: their answers are made
  here, the password check runs where the driver puts it (a worker thread, with backoff);
- a connection admitted on a node-reserve slot may do nothing but the node handshake;
- the internal-API gate (broker/security/internal_api_gate.py);
- quotas: a produce's bytes are charged when it is read, a consumer fetch's answer when
  it is sent; the connection reads nothing while muted;
- requests that get no answer (Kafka's acks=0): nothing is written, and a failure closes
  the connection (the client refreshes its metadata), as Kafka does;
- every close comes with its reason and log level.

A front end (broker/network/native_front_end.py, broker/kafka/listener_front_end.py) only splits
frames, decodes its headers and bodies into typed internal requests and encodes answers.
Times are arguments (``now_s``), the handshake's nonces come from ``nonce``: unit tests
drive this object without sockets, a clock or a node.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable

from rillet.broker.cluster.node_handshake import NodeAuthServer
from rillet.broker.dispatcher import PendingReply
from rillet.broker.handlers.unanswered import Unanswered
from rillet.broker.network.client_quotas import QuotaKind
from rillet.broker.network.connection_events import (
    Action,
    Close,
    CloseConnection,
    Dispatch,
    Frame,
    FrontEnd,
    Immediate,
    Inbound,
    Login,
    NodeAuthenticated,
    Send,
)
from rillet.broker.network.connection_throttle import ConnectionThrottle
from rillet.broker.network.outgoing import Encoder, Outgoing
from rillet.broker.network.request_budget import ReadClass, ReadPolicy
from rillet.broker.security.internal_api_gate import check_internal, refusal_response
from rillet.broker.security.sasl.exchange import SaslExchange, SaslStep
from rillet.broker.security.session import ANONYMOUS, Session
from rillet.raft.peer_mac import NONCE_BYTES
from rillet.wire.api import ApiKey
from rillet.wire.cluster_messages import NodeAuthBeginRequest, NodeAuthProveRequest
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import BlobPart
from rillet.wire.messages import ApiVersionsRequest, FetchRequest
from rillet.wire.sasl_messages import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

log = logging.getLogger(__name__)

_REFUSALS_LOGGED = 3  # internal-api refusals logged at WARNING per connection, then DEBUG


def _random_nonce() -> bytes:
    return secrets.token_bytes(NONCE_BYTES)


class ConnectionProtocol:
    def __init__(
        self,
        front_end: FrontEnd,
        session: Session,
        policy: ReadPolicy,
        max_frame_bytes: int,
        receive_bytes: int,
        sasl: SaslExchange | None = None,
        node_auth: NodeAuthServer | None = None,
        reserved: bool = False,
        nonce: Callable[[], bytes] = _random_nonce,
        peer: str = "",
    ) -> None:
        """``sasl``: clients must log in with it first; ``node_auth``: the node handshake
        is served; ``reserved``: admitted beyond the client connection limits, the
        connection may only run the node handshake."""
        self.front_end = front_end
        self.session = session
        self.policy = policy
        self.throttle = ConnectionThrottle(policy.quotas, session)
        self._max_frame_bytes = max_frame_bytes
        self._receive_bytes = receive_bytes
        self._sasl = sasl
        self._node_auth = node_auth
        self.reserved = reserved
        self._nonce = nonce
        self.peer = peer or session.host  # for the log
        # A verified client certificate logs in too (SASL may still name the user).
        self._certified = front_end.certificate_logs_in and session.principal != ANONYMOUS
        self._refusals_logged = 0

    # -- reading ---------------------------------------------------------------------------

    def logged_in(self) -> bool:
        """As a node, or (on a client slot) by SASL or a verified certificate, or with no
        SASL on the listener."""
        if self.session.node_id is not None:
            return True
        if self.reserved:
            return False
        sasl = self._sasl
        return sasl is None or sasl.authenticated or self._certified

    def read_class(self) -> ReadClass:
        """The budget the next bytes come from (none for a node: the cluster's own)."""
        if self.session.node_id is not None:
            return ReadClass(None, self._receive_bytes)
        principal = self.session.principal if self.logged_in() else None
        return self.policy.read_class(principal, self._receive_bytes)

    @property
    def muted_until_s(self) -> float:
        """Read nothing before this time (over a byte-rate quota)."""
        return self.throttle.muted_until_s

    def receive_data(self, data: bytes) -> None:
        self.front_end.feed(data)

    def next_frame(self) -> Frame | Close | None:
        """The next frame to decode, a Close, or None until more bytes arrive."""
        front_end = self.front_end
        try:
            if self.logged_in():
                raw = front_end.next_frame(self._max_frame_bytes, "max_frame_bytes")
                return None if raw is None else self._frame(raw, None)
            limit = self.policy.preauth_max_frame_bytes
            raw = front_end.next_frame(limit, "sasl_server_max_receive_size before logging in")
            if raw is None:
                return None
            if self._sasl is not None and self._sasl.failed:
                return Close("a request after a failed SASL authentication", logging.INFO)
            api = front_end.peek_api(raw)
            if api not in front_end.pre_authentication_apis:
                return Close(f"api {api} before logging in", logging.INFO)
            return self._frame(raw, api)
        except CloseConnection as exc:
            return Close(str(exc), exc.level)

    def _frame(self, raw: bytes, api: int | None) -> Frame:
        """A large body (not a produce: its records stay bytes) is decoded off the loop."""
        if not self.policy.offload.offloaded(len(raw)):
            return Frame(raw, False)
        if api is None:
            api = self.front_end.peek_api(raw)
        return Frame(raw, api != ApiKey.PRODUCE)

    @property
    def pending_bytes(self) -> int:
        return self.front_end.pending_bytes

    # -- serving ---------------------------------------------------------------------------

    def decoded(self, request: Inbound | Immediate, now_s: float) -> Action:
        """What to do with a request the front end decoded."""
        if isinstance(request, Immediate):
            return Send(Outgoing(request.correlation_id, _NO_ENCODER, parts=request.parts))
        body = request.body
        if self._node_auth is not None and type(body) in (
            NodeAuthBeginRequest,
            NodeAuthProveRequest,
        ):
            return self._node_handshake(request)
        if self._sasl is not None and self.session.node_id is None:
            gated = self._sasl_gate(request)
            if gated is not None:
                return gated
        if self.reserved and self.session.node_id is None:
            return Close(
                f"a connection beyond the client limits sent {type(body).__name__} before "
                "authenticating as a node"
            )
        refusal = check_internal(body, self.session.node_id)
        if refusal is not None:
            self._refusals_logged += 1
            level = logging.WARNING if self._refusals_logged <= _REFUSALS_LOGGED else logging.DEBUG
            log.log(level, "refused internal request from %s: %s", self.peer, refusal.reason)
            return self._answer(request, refusal_response(body, refusal))
        throttle_ms = 0
        if request.produce_bytes:
            throttle_ms = self.throttle.charge(QuotaKind.PRODUCE, request.produce_bytes, now_s)
        return Dispatch(request, throttle_ms)

    def dispatched(self, dispatch: Dispatch, result: PendingReply | Unanswered) -> Action | None:
        """What to send for the dispatcher's ``result`` (nothing, for a request that gets
        no answer; a Close when such a request failed)."""
        request = dispatch.request
        if request.unanswered:
            failure = _failure(result)
            if isinstance(result, PendingReply) and result.waiting is not None:
                result.waiting.close()
            return None if failure is None else Close(failure, logging.INFO)
        if isinstance(result, Unanswered):
            return None
        body = request.body
        offload = self.policy.offload if request.offload_answer else None
        return Send(
            Outgoing(
                request.correlation_id,
                request.encoder,
                pending=result,
                throttle_ms=dispatch.throttle_ms,
                fetch_quota=type(body) is FetchRequest and body.replica_id < 0,
                offload=offload,
            )
        )

    def logged_in_step(self, login: Login, step: SaslStep) -> Send:
        """The answer to a SASL token once checked (a failure closes at the next request)."""
        return self._answer(
            login.request, SaslAuthenticateResponse(step.error_code, step.error_message, step.token)
        )

    def sent(self, out: Outgoing, parts: list[BlobPart], now_s: float) -> None:
        """``out`` is being sent as ``parts``: a consumer fetch's bytes count to its quota."""
        if out.fetch_quota:
            self.throttle.charge_parts(QuotaKind.FETCH, parts, now_s)

    def _sasl_gate(self, request: Inbound) -> Action | None:
        """SASL before anything else (but ApiVersions) from a client not logged in: the
        answer to a SASL request, a Close for another request, None to serve it."""
        sasl = self._sasl
        assert sasl is not None
        body = request.body
        if sasl.failed:
            return Close("a request after a failed SASL authentication", logging.INFO)
        if type(body) is SaslHandshakeRequest:
            code = sasl.handshake(body.mechanism)
            return self._answer(request, SaslHandshakeResponse(code, list(sasl.mechanisms)))
        if type(body) is SaslAuthenticateRequest:
            return Login(request, sasl, body.auth_bytes)
        if not (sasl.authenticated or self._certified) and type(body) is not ApiVersionsRequest:
            return Close(f"{type(body).__name__} before SASL authentication", logging.INFO)
        return None

    def _node_handshake(self, request: Inbound) -> Send | NodeAuthenticated:
        """One step of the node handshake; a failed proof is logged at WARNING."""
        auth = self._node_auth
        assert auth is not None
        body = request.body
        if isinstance(body, NodeAuthBeginRequest):
            answer: object = auth.begin(body, self._nonce())
        else:
            assert isinstance(body, NodeAuthProveRequest)
            answer = auth.prove(body)
        if auth.refusal is not None:
            log.warning("node handshake from %s refused: %s", self.peer, auth.refusal.reason)
        send = self._answer(request, answer)
        if auth.node_id is not None and self.session.node_id is None:
            self.session.node_id = auth.node_id
            log.debug("connection %s authenticated as node %d", self.peer, auth.node_id)
            return NodeAuthenticated(send.out)
        return send

    def _answer(self, request: Inbound, message: object) -> Send:
        """An answer made here, encoded by the request's front end."""
        parts = request.encoder.answer(request.correlation_id, message, 0)
        return Send(Outgoing(request.correlation_id, request.encoder, parts=parts))


def _failure(result: PendingReply | Unanswered) -> str | None:
    """Why a request that gets no answer failed (None: it did not)."""
    if isinstance(result, Unanswered):
        return result.failure
    if result.error is not None:
        return f"acks=0 produce failed: {result.error.name}"
    return None


class _ReadyOnly:
    """The encoder of an answer made whole by its front end (never called)."""

    def answer(self, correlation_id: int, message: object, throttle_ms: int) -> list[BlobPart]:
        raise AssertionError("an immediate answer is encoded already")

    def error(
        self, correlation_id: int, code: ErrorCode, message: str | None, throttle_ms: int
    ) -> list[BlobPart]:
        raise AssertionError("an immediate answer is encoded already")


_NO_ENCODER: Encoder = _ReadyOnly()
