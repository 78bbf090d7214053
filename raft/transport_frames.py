"""Frames on an authenticated Raft connection: ``[length u32][MAC 32 bytes][payload]``.

The reader bounds every frame's size before reading it; the sender's side of a connection
(:class:`Link`) numbers its frames, so each MAC covers the receiver's nonce, the frame's
sequence number and the payload (the handshake and the checks are in transport.py).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import trio

from rillet.raft import peer_mac
from rillet.raft.errors import RaftError

HEADER = struct.Struct(">I")
MAX_FRAME_BYTES = 64 * 1024 * 1024
MAC_BYTES = peer_mac.MAC_BYTES


class TransportError(RaftError):
    """A peer failed authentication or broke the framing."""


class FrameReader:
    """Reads length-prefixed frames from a stream, bounded in size."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self._stream = stream
        self._buffer = bytearray()

    @property
    def buffered(self) -> bool:
        """Bytes already read and not yet consumed (the next frame may need no wait)."""
        return bool(self._buffer)

    async def read_exactly(self, n: int) -> bytes:
        while len(self._buffer) < n:
            chunk = await self._stream.receive_some(max(65536, n - len(self._buffer)))
            if not chunk:
                raise TransportError("connection closed")
            self._buffer += chunk
        out = bytes(self._buffer[:n])
        del self._buffer[:n]
        return out

    async def read_frame(self) -> tuple[bytes, bytes]:
        (length,) = HEADER.unpack(await self.read_exactly(HEADER.size))
        if length > MAX_FRAME_BYTES:
            raise TransportError(f"frame of {length} bytes exceeds the limit")
        mac = await self.read_exactly(MAC_BYTES)
        return mac, await self.read_exactly(length)


def frame_bytes(mac: bytes, payload: bytes) -> bytes:
    return HEADER.pack(len(payload)) + mac + payload


class Link:
    """An authenticated connection to a peer, as its sender sees it: the MAC state, and
    whether its send loop is idle (nothing queued, nothing being written). A message sent
    while it is idle is written at once by the caller with one non-blocking write, which
    saves the send loop's turn of the event loop on every Raft round trip (plain TCP only:
    over TLS the stream must encrypt every byte)."""

    __slots__ = ("fd", "idle", "nonce", "sequence")

    def __init__(self, stream: trio.abc.Stream, nonce: bytes) -> None:
        self.fd = stream.socket.fileno() if isinstance(stream, trio.SocketStream) else -1
        self.nonce = nonce
        self.sequence = 0
        self.idle = False

    def frame(self, key: bytes, payload: bytes) -> bytes:
        data = frame_bytes(
            peer_mac.mac_parts(key, self.nonce, struct.pack(">Q", self.sequence), payload), payload
        )
        self.sequence += 1
        return data


@dataclass(frozen=True, slots=True)
class Framed:
    """The rest of a frame a direct write left unsent: the send loop writes it before
    anything else, on that connection only (its MAC belongs to it)."""

    link: Link
    data: bytes
