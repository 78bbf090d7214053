"""Wake the reader once most of a large frame has arrived, not for every piece of it.

A consumer of 100 KB records receives fetch answers of many megabytes, and the kernel hands
them over as they arrive: about 90 KB per wake-up on loopback, 22,000 wake-ups of the event
loop per 2 GB read, each costing more than the bytes it delivered. While a frame of which at
least ``RECEIVE_LOW_WATER_MIN_BYTES`` are still missing is in progress, the socket's
receive low-water mark (``SO_RCVLOWAT``) is raised to what is missing (at most
``RECEIVE_LOW_WATER_MAX_BYTES``), so the reader wakes when that much is there; otherwise it
is 1, as by default, and small answers wake the reader at once. The missing bytes will come
(they belong to a frame the peer is sending) or the connection ends, which wakes the reader
anyway. Only plain TCP streams: under TLS the socket's bytes are not the frame's.
"""

from __future__ import annotations

import socket

import trio

RECEIVE_LOW_WATER_MIN_BYTES = 256 * 1024
RECEIVE_LOW_WATER_MAX_BYTES = 1024 * 1024


class ReceiveWatermark:
    """The low-water mark of one connection's socket."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self._socket = stream.socket if isinstance(stream, trio.SocketStream) else None
        self._current = 1

    def expect(self, missing_bytes: int) -> None:
        """The frame in progress lacks ``missing_bytes`` (0: no frame in progress)."""
        want = 1
        if missing_bytes >= RECEIVE_LOW_WATER_MIN_BYTES:
            want = min(missing_bytes, RECEIVE_LOW_WATER_MAX_BYTES)
        if want == self._current or self._socket is None:
            return
        try:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, want)
        except OSError:
            self._socket = None  # not supported here: every arrival wakes the reader
            return
        self._current = want
