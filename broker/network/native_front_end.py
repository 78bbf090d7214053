"""The native listener's framing and headers (sans-I/O), for the connection protocol.

Frames are rillet's own (wire/frame.py): a CBOR header map naming the api, version and
correlation id, then the body. The api of a frame is read from its header without
decoding the body (wire/request_peek.py). A request with a readable correlation id that
does not decode (or whose api or version is not served) is answered with an error; one
without closes the connection. Answers are the internal messages as they are. Before
logging in, ApiVersions, the SASL apis and the node handshake may be asked; a verified
client certificate logs a client in.
"""

from __future__ import annotations

import logging

from rillet.broker.dispatcher import header_refusal
from rillet.broker.network.connection_events import CloseConnection, Immediate, Inbound
from rillet.wire.api import ApiKey
from rillet.wire.error_codes import ErrorCode
from rillet.wire.errors import FrameTooLarge, MalformedFrame, MalformedMessage
from rillet.wire.frame import BlobPart, FrameDecoder, parse_frame_body
from rillet.wire.messages import ProduceRequest
from rillet.wire.protocol import decode_request, encode_error_response, encode_response
from rillet.wire.request_peek import peek_request_api

log = logging.getLogger(__name__)

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


class NativeEncoder:
    """Internal messages as they are (the quota's wait is not told: native clients do not
    read it)."""

    def answer(self, correlation_id: int, message: object, throttle_ms: int) -> list[BlobPart]:
        return encode_response(correlation_id, message)

    def error(
        self, correlation_id: int, code: ErrorCode, message: str | None, throttle_ms: int
    ) -> list[BlobPart]:
        return encode_error_response(correlation_id, code, message)


NATIVE = NativeEncoder()


class NativeFrontEnd:
    listener = "native"
    pre_authentication_apis: frozenset[int] = PRE_AUTHENTICATION_APIS
    certificate_logs_in = True

    def __init__(self, max_frame_bytes: int) -> None:
        self._decoder = FrameDecoder(max_frame_bytes)

    @property
    def pending_bytes(self) -> int:
        return self._decoder.buffered_bytes

    def feed(self, data: bytes) -> None:
        self._decoder.feed(data)

    def next_frame(self, max_frame_bytes: int, setting: str) -> bytes | None:
        self._decoder.set_limit(max_frame_bytes, setting)
        try:
            return self._decoder.next_frame_body()
        except FrameTooLarge as exc:
            raise CloseConnection(str(exc)) from None

    def peek_api(self, frame: bytes) -> int | None:
        try:
            return peek_request_api(frame)
        except MalformedFrame as exc:
            raise CloseConnection(f"unaddressable bad request: {exc}") from None

    def decode(self, frame: bytes) -> Inbound | Immediate:
        try:
            header, body = decode_request(parse_frame_body(frame))
        except (MalformedFrame, MalformedMessage) as exc:
            if exc.correlation_id is None:
                raise CloseConnection(f"unaddressable bad request: {exc}") from None
            log.info("bad request: %s", exc)
            parts = encode_error_response(exc.correlation_id, ErrorCode.INVALID_REQUEST, str(exc))
            return Immediate(exc.correlation_id, parts)
        refusal = header_refusal(header)
        if refusal is not None:
            assert refusal.error is not None
            parts = encode_error_response(
                header.correlation_id, refusal.error, refusal.error_message
            )
            return Immediate(header.correlation_id, parts)
        produce_bytes = 0
        if type(body) is ProduceRequest:
            produce_bytes = sum(len(p.records) for p in body.partitions)
        return Inbound(header.correlation_id, body, NATIVE, produce_bytes)
