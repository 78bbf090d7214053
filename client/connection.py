"""One TCP connection to a node, with pipelined requests matched by correlation id.

Callers never touch the socket. A request registers a waiter under a fresh correlation id and
puts its frame in an outbox; a writer task sends whatever the outbox holds in as few
``send_all`` calls as possible (small frames joined, large record sets sent as they are), and a
reader task feeds a FrameDecoder and wakes the waiter whose correlation id came back. So many
requests can be in flight at once, a cancelled caller never leaves half a frame on the wire,
and when the connection breaks every waiter fails at once: nothing waits forever.

A small request submitted while the outbox is empty and the writer is idle is written to the
socket at once (a non-blocking write of its whole frame), saving the hand-over to the writer
task: one event-loop pass less per request, which is a good part of a request's latency on
an idle connection (producer, consumer and replica fetches alike). Whatever the socket does
not take at once goes through the outbox as before, so frames never interleave.
"""

from __future__ import annotations

import itertools
import logging
import os
import ssl
from collections import deque
from typing import Any, Generic, TypeVar, cast

import trio

from rillet.client.errors import (
    ClientClosedError,
    ClientTimeoutError,
    ConnectionFailedError,
    RilletError,
    error_for,
)
from rillet.client.sasl import SaslLogin, ScramClient, plain_message
from rillet.wire.error_codes import ErrorCode
from rillet.wire.errors import WireError
from rillet.wire.frame import DEFAULT_MAX_FRAME_BYTES, FileRegion, FrameDecoder
from rillet.wire.messages import ApiVersionsRequest
from rillet.wire.protocol import (
    ErrorResponse,
    decode_response,
    encode_request,
    response_correlation_id,
    response_type_for,
)
from rillet.wire.request import Request
from rillet.wire.sasl_messages import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

log = logging.getLogger(__name__)

RECEIVE_BYTES = 1024 * 1024
# Frame parts at least this large are written as they are; smaller ones are joined first
# (one copy is cheaper than one more system call).
LARGE_PART_BYTES = 64 * 1024
DEFAULT_MAX_IN_FLIGHT = 64  # the node's default max_in_flight_requests_per_connection
BytesPart = bytes | bytearray | memoryview
R = TypeVar("R")


class PendingResponse(Generic[R]):
    """A request on the wire, waiting for its ``R`` (or for the connection to fail)."""

    __slots__ = ("correlation_id", "error", "event", "response", "response_type")

    def __init__(self, correlation_id: int, response_type: type) -> None:
        self.correlation_id = correlation_id
        self.response_type = response_type
        self.event = trio.Event()
        self.response: Any = None
        self.error: BaseException | None = None


class BrokerConnection:
    """A pipelined connection; ``connect`` starts its reader and writer in a nursery."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        client_id: str | None = None,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        write_timeout_s: float = 30.0,
        ssl_context: ssl.SSLContext | None = None,
        sasl: SaslLogin | None = None,
    ) -> None:
        """``ssl_context``: speak TLS (the node's certificate must name ``host``);
        ``sasl``: log in before any other request (the node's listener requires it)."""
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self.host = host
        self.port = port
        self.client_id = client_id
        self._write_timeout_s = write_timeout_s
        self._ssl_context = ssl_context
        self._sasl = sasl
        self._stream: trio.abc.Stream | None = None
        self._in_flight = trio.Semaphore(max_in_flight)
        self._pending: dict[int, PendingResponse[Any]] = {}
        self._ids = itertools.count(1)
        self._decoder = FrameDecoder(max_frame_bytes)
        self._outbox: deque[tuple[list[BytesPart], trio.Event | None]] = deque()
        self._outbox_ready = trio.Event()
        self._writing = False  # the writer task is sending: the outbox alone keeps the order
        self._scope = trio.CancelScope()
        self._failure: RilletError | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def closed(self) -> bool:
        """True once the connection failed or was closed; it is never reopened."""
        return self._failure is not None

    @property
    def in_flight(self) -> int:
        """Requests sent and not answered yet."""
        return len(self._pending)

    async def connect(self, nursery: trio.Nursery, timeout_s: float, probe: bool = False) -> None:
        """Open the TCP connection and start the reader and writer tasks in ``nursery``.

        The whole set-up (TCP, TLS handshake, SASL login, and with ``probe`` an ApiVersions
        round trip when there is no login) must end within ``timeout_s``: a node that is
        paused still completes TCP connects (the kernel's backlog), so only an answer shows
        that it is alive. Cancelled or failed half-way, nothing is left open.
        """
        try:
            with trio.fail_after(timeout_s):
                tcp = await trio.open_tcp_stream(self.host, self.port)
                stream: trio.abc.Stream = tcp
                if self._ssl_context is not None:
                    stream = await _tls_handshake(tcp, self._ssl_context, self.host)
                self._stream = stream
                nursery.start_soon(self._run, stream)  # closes the socket when it ends
                if self._sasl is not None:
                    await self._log_in(self._sasl, timeout_s)
                elif probe:
                    await self.request(ApiVersionsRequest(), timeout_s)
        except trio.TooSlowError:
            self.close()
            if self._stream is None:
                failed = f"cannot connect to {self.address} within"
            elif self._sasl is not None:
                failed = f"SASL login to {self.address} did not complete within"
            else:
                failed = f"no answer from {self.address} within"
            raise ConnectionFailedError(f"{failed} {timeout_s:.3g}s of connecting") from None
        except OSError as exc:
            self.close()
            raise ConnectionFailedError(f"cannot connect to {self.address}: {exc}") from exc
        except BaseException:
            self.close()  # cancelled, or the login failed: the socket is closed too
            raise

    async def _log_in(self, login: SaslLogin, timeout_s: float) -> None:
        """Kafka's SASL exchange: the handshake names the mechanism, then its tokens."""
        handshake: SaslHandshakeResponse = await self.request(
            SaslHandshakeRequest(login.mechanism), timeout_s
        )
        if handshake.error_code != ErrorCode.NONE:
            offered = ", ".join(handshake.mechanisms) or "no SASL"
            raise error_for(
                handshake.error_code, f"{self.address} offers {offered}, not {login.mechanism}"
            )

        async def step(token: bytes) -> bytes:
            answer: SaslAuthenticateResponse = await self.request(
                SaslAuthenticateRequest(token), timeout_s
            )
            if answer.error_code != ErrorCode.NONE:
                raise error_for(answer.error_code, answer.error_message)
            return answer.auth_bytes

        if login.mechanism == "PLAIN":
            await step(plain_message(login))
            return
        scram = ScramClient(login)
        server_first = await step(scram.first())
        scram.verify(await step(scram.final(server_first)))

    async def request(self, request: Request[R], timeout_s: float) -> R:
        """Send ``request`` and return its response body.

        Raises BrokerError for a top-level error response, ConnectionFailedError when the
        connection breaks, ClientTimeoutError after ``timeout_s`` (which includes waiting for
        an in-flight slot), ClientClosedError when the connection is closed meanwhile.
        """
        pending: PendingResponse[R] | None = None
        with trio.move_on_after(timeout_s):
            async with self._in_flight:
                pending = self.submit(request)
                try:
                    await pending.event.wait()
                finally:
                    # Whatever happened (answer, timeout, cancellation), this id is finished;
                    # a late response for it is dropped by the reader.
                    self._pending.pop(pending.correlation_id, None)
        return self._outcome(pending, timeout_s)

    def submit(self, request: Request[R]) -> PendingResponse[R]:
        """Queue ``request`` for sending now, without waiting: frames leave in submit order.

        For callers that must keep several requests in a fixed order on the wire (the
        producer's pipelined Produce requests); they bound their own requests in flight.
        Collect the answer with :meth:`wait_for`.
        """
        self._check_open()
        cid = next(self._ids)
        pending: PendingResponse[R] = PendingResponse(cid, response_type_for(request))
        self._pending[cid] = pending
        self._enqueue(encode_request(cid, request, self.client_id), None)
        return pending

    async def wait_for(self, pending: PendingResponse[R], timeout_s: float) -> R:
        """The response to a submitted request; raises like :meth:`request`."""
        try:
            with trio.move_on_after(timeout_s):
                await pending.event.wait()
        finally:
            self._pending.pop(pending.correlation_id, None)
        return self._outcome(pending, timeout_s)

    def _outcome(self, pending: PendingResponse[R] | None, timeout_s: float) -> R:
        if pending is None or not pending.event.is_set():
            raise ClientTimeoutError(f"no response from {self.address} within {timeout_s:.3g}s")
        if pending.error is not None:
            raise pending.error
        response = pending.response
        if isinstance(response, ErrorResponse):
            raise error_for(response.error_code, response.error_message)
        # The reader decoded it as response_type_for(request): the R of Request[R].
        return cast(R, response)

    def submit_no_response(self, request: Request[Any]) -> trio.Event:
        """Queue a request the node will not answer (produce with acks=0).

        The returned event is set once the frame is handed to the operating system (all the
        delivery acks=0 promises) or the connection failed: check ``closed`` then.
        """
        self._check_open()
        written = trio.Event()
        self._enqueue(encode_request(next(self._ids), request, self.client_id), written)
        return written

    async def send_no_response(self, request: Request[Any]) -> None:
        """Send a request the node will not answer; returns once it is written.

        Raises ConnectionFailedError (or ClientClosedError) if the connection ended first.
        """
        await self.submit_no_response(request).wait()
        self._check_open()

    def _check_open(self) -> None:
        if self._failure is not None:
            raise type(self._failure)(str(self._failure))
        if self._stream is None:
            raise ConnectionFailedError(f"connection to {self.address} is not open")

    def _enqueue(self, parts: list[Any], written: trio.Event | None) -> None:
        if any(isinstance(p, FileRegion) for p in parts):
            raise TypeError("clients send bytes only")
        if not self._outbox and not self._writing:
            parts = self._write_now(parts)
            if not parts:
                if written is not None:
                    written.set()
                return
        self._outbox.append((parts, written))
        self._outbox_ready.set()

    def _write_now(self, parts: list[BytesPart]) -> list[BytesPart]:
        """Write a small frame straight to the socket; returns what is left to queue."""
        stream = self._stream
        if (
            not isinstance(stream, trio.SocketStream)  # TLS bytes go through the writer task
            or sum(len(p) for p in parts) >= LARGE_PART_BYTES
        ):
            return parts
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        try:
            sent = os.write(stream.socket.fileno(), data)
        except OSError:  # full (BlockingIOError) or broken: the writer task finds out
            return [data]
        return [memoryview(data)[sent:]] if sent < len(data) else []

    # -- tasks ----------------------------------------------------------------------------

    async def _run(self, stream: trio.abc.Stream) -> None:
        failure: RilletError = ClientClosedError(f"connection to {self.address} closed")
        try:
            with self._scope:
                try:
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(self._write_loop, stream)
                        nursery.start_soon(self._read_loop, stream)
                except* (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as group:
                    failure = ConnectionFailedError(
                        f"connection to {self.address} broke: {group.exceptions[0]}"
                    )
                except* ConnectionFailedError as group:
                    failure = ConnectionFailedError(str(group.exceptions[0]))
                except* trio.TooSlowError:
                    failure = ConnectionFailedError(
                        f"writing to {self.address} took over {self._write_timeout_s}s"
                    )
                except* Exception as group:
                    # A bug here must not take the whole client down with it: the connection
                    # is lost, its callers get a typed error, the traceback goes to the log.
                    log.error("connection to %s failed", self.address, exc_info=group)
                    failure = ConnectionFailedError(f"connection to {self.address} failed")
        finally:
            # Also on cancellation (the client is closing): nobody may keep waiting on us.
            self._fail(failure)
            await trio.aclose_forcefully(stream)

    async def _write_loop(self, stream: trio.abc.Stream) -> None:
        outbox = self._outbox
        while True:
            if not outbox:
                self._outbox_ready = trio.Event()
                await self._outbox_ready.wait()
                continue
            chunks: list[BytesPart] = []
            small: list[BytesPart] = []
            done: list[trio.Event] = []
            while outbox:
                parts, written = outbox.popleft()
                for part in parts:
                    if len(part) >= LARGE_PART_BYTES:
                        if small:
                            chunks.append(b"".join(small))
                            small = []
                        chunks.append(part)
                    else:
                        small.append(part)
                if written is not None:
                    done.append(written)
            if small:
                chunks.append(small[0] if len(small) == 1 else b"".join(small))
            self._writing = True
            try:
                with trio.fail_after(self._write_timeout_s):
                    for chunk in chunks:
                        await stream.send_all(chunk)
            finally:
                self._writing = False
            for event in done:
                event.set()

    async def _read_loop(self, stream: trio.abc.Stream) -> None:
        decoder = self._decoder
        pending = self._pending
        while True:
            data = await stream.receive_some(RECEIVE_BYTES)
            if not data:
                raise ConnectionFailedError(f"{self.address} closed the connection")
            decoder.feed(data)
            while True:
                try:
                    frame = decoder.next_frame()
                    if frame is None:
                        break
                    cid = response_correlation_id(frame)
                except WireError as exc:
                    raise ConnectionFailedError(f"bad frame from {self.address}: {exc}") from exc
                waiter = pending.pop(cid, None)
                if waiter is None:
                    continue  # its caller gave up (timeout or cancellation)
                try:
                    waiter.response = decode_response(frame, waiter.response_type)
                except WireError as exc:
                    waiter.error = RilletError(f"malformed response from {self.address}: {exc}")
                waiter.event.set()

    def _fail(self, error: RilletError) -> None:
        """Mark the connection dead and fail every waiter with ``error``."""
        if self._failure is not None:
            return
        self._failure = error
        log.debug("%s", error)
        pending, self._pending = self._pending, {}
        for waiter in pending.values():
            waiter.error = error
            waiter.event.set()
        for _, written in self._outbox:
            if written is not None:
                written.set()
        self._outbox.clear()
        self._scope.cancel()

    def close(self) -> None:
        """Close the connection without blocking; pending requests fail with
        ClientClosedError and the connection's task closes the socket as it ends."""
        self._fail(ClientClosedError(f"connection to {self.address} closed by the client"))

    async def aclose(self) -> None:
        """Close the connection and its socket."""
        self.close()
        if self._stream is not None:
            await trio.aclose_forcefully(self._stream)


async def _tls_handshake(
    tcp: trio.SocketStream, context: ssl.SSLContext, host: str
) -> trio.SSLStream[trio.SocketStream]:
    """TLS over ``tcp``; a failed handshake (an untrusted certificate, a plaintext port)
    is an OSError naming why, so the caller reports it as a failed connection."""
    stream = trio.SSLStream(tcp, context, server_hostname=host)
    try:
        await stream.do_handshake()
    except trio.BrokenResourceError as exc:
        await trio.aclose_forcefully(tcp)
        raise OSError(f"TLS handshake failed: {exc.__cause__ or exc}") from exc
    except BaseException:  # timed out or cancelled: a paused node's socket is not kept
        await trio.aclose_forcefully(tcp)
        raise
    return stream
