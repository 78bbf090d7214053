"""Payload compression codecs, named in the low three bits of a batch's attributes.

Only codecs from the standard library are offered, so producers and consumers need nothing
beyond rillet's own dependencies. The broker never decompresses: it stores what it receives.
"""

from __future__ import annotations

import zlib
from enum import IntEnum

from rillet.wire.errors import CorruptBatch, UnsupportedCompression

CODEC_MASK = 0x07
# A decompressed payload larger than this is treated as corrupt (a zip bomb guard).
MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024


class Compression(IntEnum):
    """Codec id stored in the batch attributes."""

    NONE = 0
    ZLIB = 1

    @classmethod
    def parse(cls, name: str) -> Compression:
        """Codec from its configuration name ("none" or "zlib")."""
        try:
            return cls[name.strip().upper()]
        except KeyError:
            raise UnsupportedCompression(f"unknown compression type {name!r}") from None


def compress(codec: Compression, payload: bytes) -> bytes:
    """Compress a payload with ``codec``."""
    if codec is Compression.NONE:
        return payload
    if codec is Compression.ZLIB:
        return zlib.compress(payload, 1)
    raise UnsupportedCompression(f"codec {codec!r} is not supported")


def decompress(codec_id: int, payload: bytes | memoryview) -> bytes | memoryview:
    """Inverse of :func:`compress`; raises UnsupportedCompression or CorruptBatch."""
    if codec_id == Compression.NONE:
        return payload
    if codec_id == Compression.ZLIB:
        d = zlib.decompressobj()
        try:
            out = d.decompress(payload, MAX_DECOMPRESSED_BYTES)
        except zlib.error as exc:
            raise CorruptBatch(f"zlib payload does not decompress: {exc}") from exc
        if d.unconsumed_tail:
            raise CorruptBatch("decompressed payload exceeds the size limit")
        if not d.eof or d.unused_data:
            raise CorruptBatch("zlib payload is truncated or followed by extra bytes")
        return out
    raise UnsupportedCompression(f"batch uses unknown compression codec {codec_id}")
