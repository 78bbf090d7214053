"""A sans-I/O parser for the head of an HTTP/1.1 request (what the endpoint needs, no more).

The endpoint only answers GET and HEAD without a body, so the parser reads the request line
and the header fields up to the blank line and stops. It takes bytes as they arrive and
returns the request once the head is complete; a head larger than ``max_head_bytes``, a
malformed request line or header, an unsupported method or HTTP version all raise
:class:`~rillet.broker.http.errors.HttpError` with the status to answer with. It never reads
past the head and never allocates more than the bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.broker.http.errors import HttpError

MAX_HEAD_BYTES = 8 * 1024
MAX_HEADER_FIELDS = 64
ALLOWED_METHODS = ("GET", "HEAD")
_TOKEN_CHARS = frozenset(
    b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)


@dataclass(frozen=True, slots=True)
class HttpRequest:
    method: str
    path: str  # the target without its query string
    query: str
    version: str
    headers: tuple[tuple[str, str], ...]  # names lower-cased, in arrival order
    principal: str | None = None  # set by the server: a verified client certificate's name

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key == name:
                return value
        return None


class RequestHeadParser:
    """Feed bytes; :meth:`feed` returns the request once its head is complete."""

    def __init__(self, max_head_bytes: int = MAX_HEAD_BYTES) -> None:
        self._max_head_bytes = max_head_bytes
        self._buffer = bytearray()

    def feed(self, data: bytes | bytearray) -> HttpRequest | None:
        searched_from = max(0, len(self._buffer) - 3)
        self._buffer += data
        end = self._buffer.find(b"\r\n\r\n", searched_from)
        if end < 0:
            if len(self._buffer) > self._max_head_bytes:
                raise HttpError(431, f"request head larger than {self._max_head_bytes} bytes")
            return None
        if end + 4 > self._max_head_bytes:
            raise HttpError(431, f"request head larger than {self._max_head_bytes} bytes")
        return parse_head(bytes(self._buffer[:end]))


def parse_head(head: bytes) -> HttpRequest:
    """Parse a request head (without its final blank line)."""
    lines = head.split(b"\r\n")
    request_line = lines[0]
    parts = request_line.split(b" ")
    if len(parts) != 3 or not all(parts):
        raise HttpError(400, "malformed request line")
    method_b, target_b, version_b = parts
    if not all(c in _TOKEN_CHARS for c in method_b):
        raise HttpError(400, "malformed method")
    if version_b not in (b"HTTP/1.1", b"HTTP/1.0"):
        raise HttpError(505, "only HTTP/1.0 and HTTP/1.1 are supported")
    try:
        target = target_b.decode("ascii")
    except UnicodeDecodeError:
        raise HttpError(400, "request target is not ASCII") from None
    if not target.startswith("/") or any(ord(c) <= 32 or ord(c) >= 127 for c in target):
        raise HttpError(400, "request target must be an absolute path")
    method = method_b.decode("ascii")
    if method not in ALLOWED_METHODS:
        raise HttpError(405, f"method {method} is not allowed (GET only)")
    if len(lines) - 1 > MAX_HEADER_FIELDS:
        raise HttpError(431, f"more than {MAX_HEADER_FIELDS} header fields")
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep or not name or not all(c in _TOKEN_CHARS for c in name):
            raise HttpError(400, "malformed header field")
        try:
            text = value.strip(b" \t").decode("latin-1")
        except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
            raise HttpError(400, "malformed header value") from None
        if any(c in text for c in "\r\n\0"):
            raise HttpError(400, "malformed header value")
        headers.append((name.decode("ascii").lower(), text))
    if any(k in ("content-length", "transfer-encoding") for k, v in headers if v not in ("0", "")):
        raise HttpError(400, "requests with a body are not accepted")
    path, _, query = target.partition("?")
    return HttpRequest(method, path, query, version_b.decode("ascii"), tuple(headers))
