"""Request/response envelopes around the message bodies.

Request header map: ``{api, version, correlation_id, client_id, body, blobs}``.
Response header map: ``{correlation_id, error_code, error_message, body, blobs}``; a non-zero
top-level ``error_code`` (INVALID_REQUEST, UNKNOWN_API, ...) means the request was not
understood and ``body`` is null. Errors about one topic or partition are in the body.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rillet.wire.api import ApiKey
from rillet.wire.error_codes import ErrorCode
from rillet.wire.errors import MalformedMessage, UnknownApi
from rillet.wire.frame import BlobPart, Frame, encode_frame
from rillet.wire.messages import API_OF_REQUEST, REQUEST_TYPES
from rillet.wire.schema import from_wire, to_wire

PROTOCOL_VERSION = 0


@dataclass(frozen=True, slots=True)
class RequestHeader:
    api: ApiKey
    version: int
    correlation_id: int
    client_id: str | None


@dataclass(frozen=True, slots=True)
class ErrorResponse:
    """A top-level failure: the server could not treat the request at all."""

    correlation_id: int
    error_code: ErrorCode
    error_message: str | None


def encode_request(
    correlation_id: int, request: Any, client_id: str | None = None
) -> list[BlobPart]:
    """Frame parts of a request."""
    api = API_OF_REQUEST[type(request)]
    blobs: list[BlobPart] = []
    body = to_wire(request, blobs)
    header = {
        "api": int(api),
        "version": PROTOCOL_VERSION,
        "correlation_id": correlation_id,
        "client_id": client_id,
        "body": body,
    }
    return encode_frame(header, blobs)


def decode_request(frame: Frame) -> tuple[RequestHeader, Any]:
    """Header and typed body of a request frame.

    Raises UnknownApi or MalformedMessage; both carry what is needed to address an error
    response when the correlation id was readable.
    """
    h = frame.header
    cid = h.get("correlation_id")
    if not isinstance(cid, int) or isinstance(cid, bool):
        raise MalformedMessage("request has no integer correlation_id")
    api_raw = h.get("api")
    try:
        if not isinstance(api_raw, int) or isinstance(api_raw, bool):
            raise TypeError(api_raw)
        api = ApiKey(api_raw)
    except (ValueError, TypeError):
        err = UnknownApi(api_raw)
        raise MalformedMessage(str(err), cid) from err
    if api not in REQUEST_TYPES:
        raise MalformedMessage(f"api {api.name} is not served here", cid)
    version = h.get("version", 0)
    client_id = h.get("client_id")
    if (
        not isinstance(version, int)
        or isinstance(version, bool)
        or (client_id is not None and not isinstance(client_id, str))
    ):
        raise MalformedMessage("bad version or client_id in request header", cid)
    request_type = REQUEST_TYPES[api][0]
    try:
        body: Any = from_wire(request_type, h.get("body"), frame.blobs)
    except MalformedMessage as exc:
        raise MalformedMessage(str(exc), cid) from None
    return RequestHeader(api, version, cid, client_id), body


def encode_response(correlation_id: int, response: Any) -> list[BlobPart]:
    """Frame parts of a successful response (per-partition errors live in the body)."""
    blobs: list[BlobPart] = []
    body = to_wire(response, blobs)
    header = {"correlation_id": correlation_id, "error_code": 0, "body": body}
    return encode_frame(header, blobs)


def encode_error_response(
    correlation_id: int, error_code: ErrorCode, message: str | None = None
) -> list[BlobPart]:
    """Frame parts of a top-level error response."""
    header = {
        "correlation_id": correlation_id,
        "error_code": int(error_code),
        "error_message": message,
        "body": None,
    }
    return encode_frame(header)


def response_correlation_id(frame: Frame) -> int:
    """Correlation id of a response frame (to find the waiting request)."""
    cid = frame.header.get("correlation_id")
    if not isinstance(cid, int) or isinstance(cid, bool):
        raise MalformedMessage("response has no integer correlation_id")
    return cid


def decode_response(frame: Frame, response_type: type) -> Any:
    """Typed body of a response frame, or an :class:`ErrorResponse`."""
    cid = response_correlation_id(frame)
    code = ErrorCode.from_wire(frame.header.get("error_code", 0))
    if code is not ErrorCode.NONE:
        msg = frame.header.get("error_message")
        return ErrorResponse(cid, code, msg if isinstance(msg, str) else None)
    return from_wire(response_type, frame.header.get("body"), frame.blobs)


def response_type_for(request: Any) -> type:
    """The response dataclass that answers ``request``."""
    resp: type = REQUEST_TYPES[API_OF_REQUEST[type(request)]][1]
    return resp
