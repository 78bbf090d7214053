"""One TCP connection to a node, with pipelined requests matched by correlation id.

Requests are written under a lock (a trio stream allows one writer) and may be many in
flight; a reader task decodes responses and wakes the waiting caller. When the connection
breaks, every waiter fails with ConnectionFailedError: nothing waits forever.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import trio

from rillet.client.errors import (
    ClientClosedError,
    ClientTimeoutError,
    ConnectionFailedError,
    RilletError,
    error_for,
)
from rillet.wire.errors import WireError
from rillet.wire.frame import DEFAULT_MAX_FRAME_BYTES, FileRegion, FrameDecoder
from rillet.wire.protocol import (
    ErrorResponse,
    decode_response,
    encode_request,
    response_correlation_id,
    response_type_for,
)

_RECEIVE_BYTES = 1024 * 1024


@dataclass(slots=True)
class _Waiter:
    response_type: type
    event: trio.Event = field(default_factory=trio.Event)
    response: Any = None
    error: BaseException | None = None


class BrokerConnection:
    def __init__(
        self,
        host: str,
        port: int,
        client_id: str | None = None,
        max_in_flight: int = 1000,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    ) -> None:
        self.host = host
        self.port = port
        self.client_id = client_id
        self._stream: trio.SocketStream | None = None
        self._send_lock = trio.Lock()
        self._in_flight = trio.Semaphore(max_in_flight)
        self._pending: dict[int, _Waiter] = {}
        self._ids = itertools.count(1)
        self._decoder = FrameDecoder(max_frame_bytes)
        self.closed = False
        self._failure: BaseException | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    async def connect(self, nursery: trio.Nursery, timeout_s: float) -> None:
        try:
            with trio.fail_after(timeout_s):
                self._stream = await trio.open_tcp_stream(self.host, self.port)
        except (OSError, trio.TooSlowError) as exc:
            raise ConnectionFailedError(f"cannot connect to {self.address}: {exc}") from exc
        nursery.start_soon(self._read_loop)

    async def request(self, request: Any, timeout_s: float) -> Any:
        """Send a request and return its response body; raises BrokerError for top-level
        errors, ConnectionFailedError, ClientTimeoutError."""
        waiter = _Waiter(response_type_for(request))
        async with self._in_flight:
            cid = await self._send(request, waiter)
            try:
                with trio.fail_after(timeout_s):
                    await waiter.event.wait()
            except trio.TooSlowError:
                self._pending.pop(cid, None)
                raise ClientTimeoutError(
                    f"no response from {self.address} within {timeout_s:.1f}s"
                ) from None
        if waiter.error is not None:
            raise waiter.error
        if isinstance(waiter.response, ErrorResponse):
            raise error_for(waiter.response.error_code, waiter.response.error_message)
        return waiter.response

    async def send_only(self, request: Any) -> None:
        """Send a request that gets no response (produce with acks=0)."""
        await self._send(request, None)

    async def _send(self, request: Any, waiter: _Waiter | None) -> int:
        if self.closed or self._stream is None:
            raise ConnectionFailedError(f"connection to {self.address} is closed") from (
                self._failure
            )
        cid = next(self._ids)
        parts = encode_request(cid, request, self.client_id)
        data = b"".join(p for p in parts if not isinstance(p, FileRegion))
        if waiter is not None:
            self._pending[cid] = waiter
        try:
            async with self._send_lock:
                await self._stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            self._pending.pop(cid, None)
            self._fail(ConnectionFailedError(f"send to {self.address} failed: {exc}"))
            raise ConnectionFailedError(f"send to {self.address} failed: {exc}") from exc
        return cid

    async def _read_loop(self) -> None:
        stream = self._stream
        assert stream is not None
        try:
            while True:
                data = await stream.receive_some(_RECEIVE_BYTES)
                if not data:
                    raise ConnectionFailedError(f"{self.address} closed the connection")
                self._decoder.feed(data)
                while (frame := self._decoder.next_frame()) is not None:
                    cid = response_correlation_id(frame)
                    waiter = self._pending.pop(cid, None)
                    if waiter is None:
                        continue  # its caller timed out
                    try:
                        waiter.response = decode_response(frame, waiter.response_type)
                    except WireError as exc:
                        waiter.error = RilletError(f"bad response from {self.address}: {exc}")
                    waiter.event.set()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            self._fail(ConnectionFailedError(f"connection to {self.address} broke: {exc}"))
        except (ConnectionFailedError, WireError) as exc:
            self._fail(ConnectionFailedError(str(exc)))
        except trio.Cancelled:
            self._fail(ClientClosedError("client closed"))
            raise

    def _fail(self, error: BaseException) -> None:
        if self.closed:
            return
        self.closed = True
        self._failure = error
        pending, self._pending = self._pending, {}
        for waiter in pending.values():
            waiter.error = error
            waiter.event.set()
        if self._stream is not None:
            # Closing without awaiting: wakes the reader if it is still receiving.
            try:
                self._stream.socket.close()
            except OSError:
                pass

    async def aclose(self) -> None:
        self._fail(ClientClosedError("connection closed by the client"))
        if self._stream is not None:
            await trio.aclose_forcefully(self._stream)
