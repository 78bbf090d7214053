"""Kafka's framing: every request and response is a 4-byte big-endian size, then the bytes.

Sans-I/O: feed received bytes, take whole frames out. The size is checked before any byte
of the frame is buffered beyond it, so a hostile size cannot make the node allocate. The
limit can change between frames (it is smaller before the client has logged in).
"""

from __future__ import annotations

import struct

from rillet.broker.kafka.errors import KafkaFrameTooLarge

SIZE = struct.Struct(">i")


class KafkaFrameDecoder:
    def __init__(self, max_frame_bytes: int) -> None:
        self._max = max_frame_bytes
        self._limit_name = "max_frame_bytes"
        self._buf = bytearray()
        self._pos = 0

    @property
    def pending_bytes(self) -> int:
        """Bytes received and not yet taken out as a frame."""
        return len(self._buf) - self._pos

    def set_limit(self, max_frame_bytes: int, setting: str) -> None:
        """The limit for the next frames, and the setting to name when one exceeds it."""
        self._max = max_frame_bytes
        self._limit_name = setting

    def feed(self, data: bytes) -> None:
        if self._pos and self._pos == len(self._buf):
            self._buf.clear()
            self._pos = 0
        self._buf += data

    def next_frame(self) -> bytes | None:
        """The next whole frame's bytes (without its size), or None until more arrive."""
        available = len(self._buf) - self._pos
        if available < SIZE.size:
            return None
        (size,) = SIZE.unpack_from(self._buf, self._pos)
        if size < 0 or size > self._max:
            raise KafkaFrameTooLarge(
                f"frame of {size} bytes (limit {self._max}, {self._limit_name})"
            )
        if available < SIZE.size + size:
            return None
        start = self._pos + SIZE.size
        frame = bytes(self._buf[start : start + size])
        self._pos = start + size
        if self._pos > 1 << 20:  # compact now and then, not on every frame
            del self._buf[: self._pos]
            self._pos = 0
        return frame
