"""The trio driver of the HTTP endpoint: read one request head, answer it, close.

Each connection carries one request (``Connection: close``): probes and scrapes are rare, so
keep-alive would buy nothing and cost state. Reading the head has a deadline and a size
bound, and the number of concurrent connections is capped, so a slow or hostile client cannot
hold the endpoint or the node's memory. Routing is a plain function of the parsed request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import trio

from rillet.broker.http.errors import HttpError
from rillet.broker.http.request_parser import HttpRequest, RequestHeadParser

log = logging.getLogger(__name__)

REQUEST_HEAD_TIMEOUT_S = 5.0
RESPONSE_SEND_TIMEOUT_S = 10.0
MAX_HTTP_CONNECTIONS = 64
RECEIVE_BYTES = 4096

_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
    505: "HTTP Version Not Supported",
}


@dataclass(frozen=True, slots=True)
class HttpResponse:
    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"


Route = Callable[[HttpRequest], HttpResponse]


def plain(status: int, text: str) -> HttpResponse:
    return HttpResponse(status, (text + "\n").encode())


def encode_response(response: HttpResponse, head_only: bool = False) -> bytes:
    reason = _REASONS.get(response.status, "")
    head = (
        f"HTTP/1.1 {response.status} {reason}\r\n"
        f"Content-Type: {response.content_type}\r\n"
        f"Content-Length: {len(response.body)}\r\n"
        "Cache-Control: no-store\r\n"
        "X-Content-Type-Options: nosniff\r\n"
        "Connection: close\r\n\r\n"
    ).encode("latin-1")
    return head if head_only else head + response.body


class HttpServer:
    """Serves ``route`` on trio listeners."""

    def __init__(self, route: Route, max_connections: int = MAX_HTTP_CONNECTIONS) -> None:
        self._route = route
        self._max_connections = max_connections
        self.open_connections = 0

    async def handle(self, stream: trio.abc.Stream) -> None:
        if self.open_connections >= self._max_connections:
            await trio.aclose_forcefully(stream)
            return
        self.open_connections += 1
        try:
            await self._serve_one(stream)
        except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError) as exc:
            log.debug("http connection ended: %s", exc)
        finally:
            self.open_connections -= 1
            await trio.aclose_forcefully(stream)

    async def _serve_one(self, stream: trio.abc.Stream) -> None:
        request: HttpRequest | None = None
        response: HttpResponse
        with trio.move_on_after(REQUEST_HEAD_TIMEOUT_S):
            try:
                request = await _read_head(stream)
            except HttpError as exc:
                await _send(stream, encode_response(plain(exc.status, exc.reason)))
                return
            if request is None:
                return  # closed before a full head
        if request is None:
            await _send(stream, encode_response(plain(408, "request head not received in time")))
            return
        try:
            response = self._route(request)
        except Exception:
            log.exception("http route %s failed", request.path)
            response = plain(500, "internal error")
        await _send(stream, encode_response(response, head_only=request.method == "HEAD"))


async def _read_head(stream: trio.abc.Stream) -> HttpRequest | None:
    parser = RequestHeadParser()
    while True:
        data = await stream.receive_some(RECEIVE_BYTES)
        if not data:
            return None
        request = parser.feed(data)
        if request is not None:
            return request


async def _send(stream: trio.abc.Stream, data: bytes) -> None:
    with trio.move_on_after(RESPONSE_SEND_TIMEOUT_S):
        await stream.send_all(data)
