"""The Kafka listener's framing and headers (sans-I/O), for the connection protocol.

Frames are Kafka's (a 4-byte size, then the request); the header names the api and
version, the body decodes with the version's schema and is translated to an internal
request (broker/kafka/front_end.py) whose answer is translated back. Bad input closes the
connection, as Kafka does: a frame over the limit, an unreadable header, an api or version
not served, a body that does not decode. An ApiVersions request of a version above ours is
answered in v0 format with UNSUPPORTED_VERSION and our table, so the client can retry
within it. Before a SASL login only ApiVersions and the SASL apis may be asked (a client
certificate does not log in here: Kafka's SASL listeners want SASL). An acks=0 produce
gets no answer. The answer to a large request is built in a worker thread.
"""

from __future__ import annotations

import logging

from rillet.broker.kafka.api_table import SASL_AUTHENTICATE, SASL_HANDSHAKE, ApiSchema
from rillet.broker.kafka.codec import (
    decode_body,
    decode_header,
    encode_response,
    frame_parts,
    schema_for,
    unsupported_api_versions,
)
from rillet.broker.kafka.entities import with_throttle_time
from rillet.broker.kafka.errors import KafkaProtocolError, UnsupportedKafkaRequest
from rillet.broker.kafka.framing import KafkaFrameDecoder
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import (
    Answer,
    Caller,
    ClusterView,
    Forwarded,
    KafkaResponse,
    RawBody,
)
from rillet.broker.network.connection_events import CloseConnection, Immediate, Inbound
from rillet.wire.api import ApiKey
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import BlobPart

log = logging.getLogger(__name__)

# What a client that has not logged in may ask (Kafka serves the same before SASL).
PRE_AUTHENTICATION_APIS = frozenset({ApiKey.API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE})


class KafkaEncoder:
    """One request's answer in its api and version: the internal answer translated."""

    __slots__ = ("_forward", "_schema")

    def __init__(self, schema: ApiSchema, forward: Forwarded) -> None:
        self._schema = schema
        self._forward = forward

    def answer(self, correlation_id: int, message: object, throttle_ms: int) -> list[BlobPart]:
        return self._parts(correlation_id, self._forward.answer(message), throttle_ms)

    def error(
        self, correlation_id: int, code: ErrorCode, message: str | None, throttle_ms: int
    ) -> list[BlobPart]:
        return self._parts(correlation_id, self._forward.fail(int(code)), throttle_ms)

    def _parts(
        self, correlation_id: int, response: KafkaResponse, throttle_ms: int
    ) -> list[BlobPart]:
        return response_parts(correlation_id, self._schema, response, throttle_ms)


def response_parts(
    correlation_id: int, schema: ApiSchema, response: KafkaResponse, throttle_ms: int = 0
) -> list[BlobPart]:
    """A response's frame: a kio entity encoded (with the quota's wait), or a raw body."""
    if isinstance(response, RawBody):
        return frame_parts(correlation_id, response.parts)
    if throttle_ms:
        response = with_throttle_time(response, throttle_ms)
    return [encode_response(correlation_id, schema, response)]


class KafkaFrontEnd:
    listener = "kafka"
    pre_authentication_apis: frozenset[int] = PRE_AUTHENTICATION_APIS
    certificate_logs_in = False

    def __init__(
        self, max_frame_bytes: int, view: ClusterView, peer_host: str, offload_bytes: int
    ) -> None:
        """``offload_bytes``: the answer to a request this large is built off the loop."""
        self._decoder = KafkaFrameDecoder(max_frame_bytes)
        self._view = view
        self._peer_host = peer_host
        self._offload_bytes = offload_bytes

    @property
    def pending_bytes(self) -> int:
        return self._decoder.pending_bytes

    def feed(self, data: bytes) -> None:
        self._decoder.feed(data)

    def next_frame(self, max_frame_bytes: int, setting: str) -> bytes | None:
        self._decoder.set_limit(max_frame_bytes, setting)
        try:
            return self._decoder.next_frame()
        except KafkaProtocolError as exc:
            raise CloseConnection(str(exc)) from None

    def peek_api(self, frame: bytes) -> int | None:
        try:
            return decode_header(frame)[0].api_key
        except KafkaProtocolError as exc:
            raise CloseConnection(str(exc)) from None

    def decode(self, frame: bytes) -> Inbound | Immediate:
        try:
            return self._decode(frame)
        except KafkaProtocolError as exc:
            raise CloseConnection(str(exc)) from None

    def _decode(self, frame: bytes) -> Inbound | Immediate:
        header, body_start = decode_header(frame)
        cid = header.correlation_id
        try:
            schema = schema_for(header)
        except UnsupportedKafkaRequest:
            if header.api_key == ApiKey.API_VERSIONS:
                return Immediate(cid, [unsupported_api_versions(cid)])
            raise
        request = decode_body(frame, body_start, schema)
        action = translate(schema, request, self._view, Caller(header.client_id, self._peer_host))
        if isinstance(action, Answer):
            return Immediate(cid, response_parts(cid, schema, action.response))
        produce = schema.api_key == ApiKey.PRODUCE
        return Inbound(
            cid,
            action.native,
            KafkaEncoder(schema, action),
            produce_bytes=len(frame) if produce else 0,
            unanswered=action.unanswered,
            # A fetch's answer updates its fetch session: on the event loop, never in a thread.
            offload_answer=schema.api_key not in (ApiKey.PRODUCE, ApiKey.FETCH)
            and len(frame) >= self._offload_bytes,
        )
