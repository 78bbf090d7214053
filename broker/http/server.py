"""The trio driver of the HTTP endpoint: read one request head, answer it, close.

Each connection carries one request (``Connection: close``): probes and scrapes are rare, so
keep-alive would buy nothing and cost state. From accept to a complete head (the TLS
handshake included) a connection has ``http.request_head_timeout_ms``, the head a size bound,
and connections take slots (:mod:`~rillet.broker.http.slots`) in which an idle one gives way
to a new one, so sockets that send nothing cannot hold the endpoint, its probes or the node's
memory. Routing is a plain function of the parsed request; a route that has work for a
worker thread (the console's message browser decodes records) returns an awaitable instead.
"""

from __future__ import annotations

import inspect
import logging
import math
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

import trio

from rillet.broker.http.errors import HttpError
from rillet.broker.http.request_parser import HttpRequest, RequestHeadParser
from rillet.broker.http.slots import HttpSlots
from rillet.broker.network.served_stream import peer_host
from rillet.broker.security.session import certificate_subject

log = logging.getLogger(__name__)

REQUEST_HEAD_TIMEOUT_MS = 1_000
RESPONSE_SEND_TIMEOUT_S = 10.0
MAX_HTTP_CONNECTIONS = 64
MAX_HTTP_CONNECTIONS_PER_IP = 8
RECEIVE_BYTES = 4096
PRESSURE_LOG_INTERVAL_S = 1.0

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    421: "Misdirected Request",
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
    headers: tuple[tuple[str, str], ...] = ()  # further header fields (WWW-Authenticate)


Route = Callable[[HttpRequest], HttpResponse | Awaitable[HttpResponse]]


def plain(status: int, text: str) -> HttpResponse:
    return HttpResponse(status, (text + "\n").encode())


def encode_response(response: HttpResponse, head_only: bool = False) -> bytes:
    reason = _REASONS.get(response.status, "")
    head = (
        f"HTTP/1.1 {response.status} {reason}\r\n"
        f"Content-Type: {response.content_type}\r\n"
        f"Content-Length: {len(response.body)}\r\n"
        + "".join(f"{name}: {value}\r\n" for name, value in response.headers)
        + "Cache-Control: no-store\r\n"
        "X-Content-Type-Options: nosniff\r\n"
        "Connection: close\r\n\r\n"
    ).encode("latin-1")
    return head if head_only else head + response.body


class HttpServer:
    """Serves ``route`` on trio listeners (over TLS when ``tls`` gives a context)."""

    def __init__(
        self,
        route: Route,
        max_connections: int = MAX_HTTP_CONNECTIONS,
        *,
        max_connections_per_ip: int = MAX_HTTP_CONNECTIONS_PER_IP,
        request_head_timeout_ms: int = REQUEST_HEAD_TIMEOUT_MS,
        tls: Callable[[], ssl.SSLContext] | None = None,
    ) -> None:
        self._route = route
        self._slots = HttpSlots(max_connections, max_connections_per_ip)
        self._head_timeout_s = request_head_timeout_ms / 1000
        self.tls = tls
        self._scopes: dict[int, trio.CancelScope] = {}
        self._pressure_logged_s = -math.inf

    @property
    def open_connections(self) -> int:
        return self._slots.open_connections

    async def handle(self, stream: trio.abc.Stream) -> None:
        grant = self._slots.admit(_peer_host(stream))
        for evicted in grant.evicted:
            self._scopes.pop(evicted).cancel()
        if grant.evicted or grant.connection is None:
            self._log_pressure()
        if grant.connection is None:
            await trio.aclose_forcefully(stream)
            return
        connection = grant.connection
        scope = self._scopes[connection] = trio.CancelScope()
        try:
            with scope:
                await self._serve_one(stream, connection)
        except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError) as exc:
            log.debug("http connection ended: %s", exc)
        finally:
            self._scopes.pop(connection, None)
            self._slots.release(connection)
            await trio.aclose_forcefully(stream)

    def _log_pressure(self) -> None:
        """At most once a second: many silent sockets or a flood of connections."""
        now_s = trio.current_time()
        if now_s - self._pressure_logged_s < PRESSURE_LOG_INTERVAL_S:
            return
        self._pressure_logged_s = now_s
        log.info(
            "http: all connection slots taken; since start %d connections that sent no "
            "request were closed for newer ones, %d refused (every slot answering)",
            self._slots.evictions,
            self._slots.refused,
        )

    async def _serve_one(self, stream: trio.abc.Stream, connection: int) -> None:
        request: HttpRequest | None = None
        response: HttpResponse
        with trio.move_on_after(self._head_timeout_s):
            if self.tls is not None:
                secured = trio.SSLStream(stream, self.tls(), server_side=True)
                await secured.do_handshake()  # a failure raises BrokenResourceError
                stream = secured
            try:
                request = await _read_head(stream)
            except HttpError as exc:
                await _send(stream, encode_response(plain(exc.status, exc.reason)))
                return
            if request is None:
                return  # closed before a full head
        if request is None:
            if self.tls is None or isinstance(stream, trio.SSLStream):
                await _send(
                    stream, encode_response(plain(408, "request head not received in time"))
                )
            return
        self._slots.started(connection)
        request = replace(request, principal=_principal(stream))
        try:
            answer = self._route(request)
            response = await answer if inspect.isawaitable(answer) else answer
        except Exception:
            log.exception("http route %s failed", request.path)
            response = plain(500, "internal error")
        await _send(stream, encode_response(response, head_only=request.method == "HEAD"))


def _peer_host(stream: trio.abc.Stream) -> str:
    if isinstance(stream, trio.SocketStream):
        return peer_host(stream)
    return "local"  # an in-memory stream (tests)


def _principal(stream: trio.abc.Stream) -> str | None:
    """``User:<subject>`` of a verified client certificate (mutual TLS), else None."""
    if isinstance(stream, trio.SSLStream):
        certificate = stream.getpeercert()
        subject = certificate_subject(certificate) if certificate else ""
        return f"User:{subject}" if subject else None
    return None


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
