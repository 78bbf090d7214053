"""The api of a request frame, read without decoding its body (sans-I/O).

A request's header map lists ``api``, ``version``, ``correlation_id`` and ``client_id``
before ``body`` (wire/protocol.py writes them in that order). A server that must refuse a
request by its api alone (before the client has logged in, say) reads the map's entries up
to ``body`` and stops there, so a large body sent by a stranger is never decoded.
"""

from __future__ import annotations

import io

import cbor2

from rillet.wire.errors import MalformedFrame

_MAP = 5  # CBOR major type of a map
_HEAD_ENTRIES = 8  # entries read before giving up on finding the api ahead of the body


def peek_request_api(frame_body: bytes) -> int | None:
    """The ``api`` of a request frame's header when it comes before ``body`` (it does in
    every frame rillet's clients send); None when it does not or is not an integer.
    Raises MalformedFrame when the frame does not start with a CBOR map."""
    stream = io.BytesIO(frame_body)
    entries = _map_length(stream)
    decoder = cbor2.CBORDecoder(stream)
    for _ in range(min(entries, _HEAD_ENTRIES)):
        try:
            key = decoder.decode()
            if key in ("body", "blobs") or not isinstance(key, str):
                return None
            value = decoder.decode()
        except Exception as exc:  # cbor2 raises assorted types on garbage
            raise MalformedFrame(f"frame header is not valid CBOR: {exc}") from None
        if key == "api":
            is_int = isinstance(value, int) and not isinstance(value, bool)
            return value if is_int else None
    return None


def _map_length(stream: io.BytesIO) -> int:
    """Read a CBOR map's head; its entry count (a large number when indefinite)."""
    head = stream.read(1)
    if not head or head[0] >> 5 != _MAP:
        raise MalformedFrame("frame header is not a CBOR map")
    info = head[0] & 0x1F
    if info < 24:
        return info
    if info == 31:  # indefinite length: entries until a break
        return _HEAD_ENTRIES
    size = {24: 1, 25: 2, 26: 4, 27: 8}.get(info)
    raw = stream.read(size) if size else b""
    if not size or len(raw) != size:
        raise MalformedFrame("frame header has a bad map length")
    return int.from_bytes(raw, "big")
