"""Kafka request headers and bodies in, response frames out. Sans-I/O.

Request header v1 (api key, version, correlation id, nullable client id), or v2 with tagged
fields after it when the request version is flexible (ApiVersions v3+ here). Responses use
header v0 (the correlation id) throughout: ApiVersions keeps v0 even when flexible, and no
other flexible version is served. Bodies decode and encode with kio.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass

from kio.serial.errors import SerialError
from kio.static.protocol import RequestPayload, ResponsePayload

from rillet.broker.kafka.api_table import SUPPORTED, ApiSchema, api_name, served_schema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.errors import MalformedKafkaRequest, UnsupportedKafkaRequest
from rillet.broker.kafka.features import feature_fields
from rillet.broker.kafka.null_arrays import null_array_path
from rillet.wire.api import ApiKey
from rillet.wire.frame import BlobPart, FileRegion

_HEAD = struct.Struct(">hhi")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_MAX_TAGS = 64  # tagged fields in a request header (none are defined; bound the loop)


@dataclass(frozen=True, slots=True)
class KafkaRequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


def decode_header(frame: bytes) -> tuple[KafkaRequestHeader, int]:
    """The header and where the body starts. Raises MalformedKafkaRequest."""
    if len(frame) < _HEAD.size + _I16.size:
        raise MalformedKafkaRequest(f"request of {len(frame)} bytes has no whole header")
    api_key, version, correlation_id = _HEAD.unpack_from(frame, 0)
    pos = _HEAD.size
    (length,) = _I16.unpack_from(frame, pos)
    pos += _I16.size
    client_id = None
    if length >= 0:
        if pos + length > len(frame):
            raise MalformedKafkaRequest("client id runs past the request")
        try:
            client_id = frame[pos : pos + length].decode()
        except UnicodeDecodeError:
            raise MalformedKafkaRequest("client id is not UTF-8") from None
        pos += length
    elif length != -1:
        raise MalformedKafkaRequest(f"client id length {length}")
    return KafkaRequestHeader(api_key, version, correlation_id, client_id), pos


def schema_for(header: KafkaRequestHeader) -> ApiSchema:
    """The entity classes for the header's api and version; raises UnsupportedKafkaRequest."""
    schema = served_schema(header.api_key, header.api_version)
    if schema is None:
        raise UnsupportedKafkaRequest(
            f"{api_name(header.api_key)} v{header.api_version} is not served"
        )
    return schema


def decode_body(frame: bytes, body_start: int, schema: ApiSchema) -> RequestPayload:
    """The request entity. Raises MalformedKafkaRequest on any decoding failure."""
    pos = body_start
    try:
        if schema.flexible:
            pos = _skip_tagged_fields(frame, pos)
        entity, _size = schema.read_request(frame, pos)
    except MalformedKafkaRequest:
        raise
    except (SerialError, ValueError, TypeError, IndexError, OverflowError, struct.error) as exc:
        raise MalformedKafkaRequest(
            f"{api_name(schema.api_key)} v{schema.version}: {type(exc).__name__}: {exc}"
        ) from None
    null = null_array_path(entity)
    if null is not None:
        raise MalformedKafkaRequest(
            f"{api_name(schema.api_key)} v{schema.version}: {null} is null, which it may not be"
        )
    return entity


def encode_response(correlation_id: int, schema: ApiSchema, response: ResponsePayload) -> bytes:
    """A whole response frame: size, header, body. The header is v0 (the correlation id)
    for non-flexible versions and for ApiVersions, whose clients must read it before they
    know what the broker speaks; v1 (with an empty tagged-field section) otherwise."""
    buf = io.BytesIO()
    buf.write(b"\0\0\0\0")
    buf.write(_I32.pack(correlation_id))
    if schema.flexible and schema.api_key != ApiKey.API_VERSIONS:
        buf.write(b"\0")  # no tagged fields in the header
    schema.write_response(buf, response)
    data = buf.getbuffer()
    _I32.pack_into(data, 0, len(data) - 4)
    del data
    return buf.getvalue()


def frame_parts(correlation_id: int, body: list[BlobPart]) -> list[BlobPart]:
    """Size and header v0 before body parts already encoded (file regions included)."""
    size = 4 + sum(p.length if isinstance(p, FileRegion) else len(p) for p in body)
    return [_I32.pack(size) + _I32.pack(correlation_id), *body]


def unsupported_api_versions(correlation_id: int) -> bytes:
    """ApiVersions answered in v0 format with UNSUPPORTED_VERSION and the full table: what a
    client asking a version above ours expects, so it can retry with one we serve."""
    schema = served_schema(ApiKey.API_VERSIONS, 0)
    assert schema is not None
    return encode_response(correlation_id, schema, api_versions_response(schema, 35))


def api_versions_response(
    schema: ApiSchema, error_code: int = 0, rillet_level: int = 0
) -> ResponsePayload:
    """The ApiVersions answer of ``schema``'s version: every api and version served, and
    the features (``rillet_level``: the cluster's feature level, 0 when not known)."""
    return build(
        schema.response_type,
        {
            "error_code": error_code,
            "api_keys": [
                {"api_key": k, "min_version": lo, "max_version": hi}
                for k, (lo, hi) in sorted(SUPPORTED.items())
            ],
            "throttle_time": 0,
            **feature_fields(rillet_level),
        },
    )


def _skip_tagged_fields(frame: bytes, pos: int) -> int:
    count, pos = _uvarint(frame, pos)
    if count > _MAX_TAGS:
        raise MalformedKafkaRequest(f"{count} tagged fields in a request header")
    for _ in range(count):
        _tag, pos = _uvarint(frame, pos)
        size, pos = _uvarint(frame, pos)
        pos += size
        if pos > len(frame):
            raise MalformedKafkaRequest("tagged field runs past the request")
    return pos


def _uvarint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise MalformedKafkaRequest("varint runs past the request")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise MalformedKafkaRequest("varint longer than 5 bytes")
