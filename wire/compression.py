"""Record compression: Kafka's five codecs, named in the low three bits of the attributes.

A batch's records (everything after the 61-byte header) are compressed as one block. The ids
and stream formats are Kafka's, so a batch any Kafka client produced decodes here and the
other way round:

==  ======  ===============================================================================
0   none
1   gzip    a gzip stream (RFC 1952); concatenated members are read as one
2   snappy  written in the xerial framing the Java client uses (a 16-byte header, then
            length-prefixed raw snappy blocks of at most 32 KiB input); plain raw snappy,
            which some clients write, is read too
3   lz4     the LZ4 frame format, written with independent 64 KiB blocks and no content size
4   zstd    a zstd frame
==  ======  ===============================================================================

The broker never decompresses: it stores what it receives. Decompression refuses to produce
more than ``MAX_DECOMPRESSED_BYTES`` (a zip-bomb guard) and reports damaged input as
CorruptBatch, never another exception.
"""

from __future__ import annotations

import struct
import zlib
from enum import IntEnum

import cramjam  # snappy; python-snappy 0.7 is a wrapper around it (measured: same speed)
import lz4.frame
import zstandard

from rillet.wire.errors import CorruptBatch, UnsupportedCompression

CODEC_MASK = 0x07
# A decompressed payload larger than this is treated as corrupt (a zip bomb guard).
MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024

GZIP_LEVEL = 1  # fastest: the producer compresses in Python's event loop
ZSTD_LEVEL = 3  # Kafka's default
SNAPPY_BLOCK_BYTES = 32 * 1024  # the xerial framing's input block size
XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)  # version 1, compatible with 1
_BLOCK_LENGTH = struct.Struct(">i")
_RETIRED = {"zlib": "gzip"}


class Compression(IntEnum):
    """Codec id stored in the batch attributes (Kafka's ids)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @classmethod
    def parse(cls, name: str) -> Compression:
        """Codec from its configuration name: none, gzip, snappy, lz4 or zstd."""
        key = name.strip().lower()
        try:
            return cls[key.upper()]
        except KeyError:
            hint = f" (use {_RETIRED[key]!r})" if key in _RETIRED else ""
            names = ", ".join(c.name.lower() for c in cls)
            raise UnsupportedCompression(
                f"unknown compression type {name!r}{hint}; one of {names}"
            ) from None


def compress(codec: Compression, payload: bytes) -> bytes:
    """Compress a batch's records with ``codec``."""
    if codec is Compression.NONE:
        return payload
    if codec is Compression.GZIP:
        c = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        return c.compress(payload) + c.flush()
    if codec is Compression.SNAPPY:
        return _xerial_compress(payload)
    if codec is Compression.LZ4:
        framed: bytes = lz4.frame.compress(
            payload,
            block_size=lz4.frame.BLOCKSIZE_MAX64KB,
            block_linked=False,
            content_checksum=False,
            store_size=False,
        )
        return framed
    if codec is Compression.ZSTD:
        return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(payload)
    raise UnsupportedCompression(f"codec {codec!r} is not supported")


def decompress(
    codec_id: int, payload: bytes | memoryview, max_bytes: int = MAX_DECOMPRESSED_BYTES
) -> bytes | memoryview:
    """Inverse of :func:`compress`; raises UnsupportedCompression or CorruptBatch."""
    if codec_id == Compression.NONE:
        return payload
    if codec_id == Compression.GZIP:
        return _gzip_decompress(payload, max_bytes)
    if codec_id == Compression.SNAPPY:
        return _snappy_decompress(bytes(payload), max_bytes)
    if codec_id == Compression.LZ4:
        return _lz4_decompress(payload, max_bytes)
    if codec_id == Compression.ZSTD:
        return _zstd_decompress(payload, max_bytes)
    raise UnsupportedCompression(f"batch uses unknown compression codec {codec_id}")


def _too_large(max_bytes: int) -> CorruptBatch:
    return CorruptBatch(f"decompressed records exceed the limit of {max_bytes} bytes")


def _gzip_decompress(payload: bytes | memoryview, max_bytes: int) -> bytes:
    """A gzip stream of one or more members."""
    out: list[bytes] = []
    total = 0
    data = bytes(payload)
    while True:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            chunk = d.decompress(data, max_bytes - total + 1)
        except zlib.error as exc:
            raise CorruptBatch(f"gzip records do not decompress: {exc}") from exc
        total += len(chunk)
        if total > max_bytes or d.unconsumed_tail:
            raise _too_large(max_bytes)
        if not d.eof:
            raise CorruptBatch("gzip records are truncated")
        out.append(chunk)
        data = d.unused_data
        if not data:
            return b"".join(out)


def _xerial_compress(payload: bytes) -> bytes:
    parts = [XERIAL_HEADER]
    view = memoryview(payload)
    for start in range(0, len(payload), SNAPPY_BLOCK_BYTES):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + SNAPPY_BLOCK_BYTES]))
        parts.append(_BLOCK_LENGTH.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_block(block: bytes | memoryview, room: int) -> bytes:
    """One raw snappy block, refused before decompressing when it claims more than ``room``."""
    try:
        claimed = cramjam.snappy.decompress_raw_len(block)
    except Exception as exc:  # cramjam raises its own error type on garbage
        raise CorruptBatch(f"snappy block has no valid length: {exc}") from exc
    if claimed > room:
        raise CorruptBatch("decompressed records exceed the size limit")
    out = bytearray(claimed)
    try:
        written = cramjam.snappy.decompress_raw_into(block, out)
    except Exception as exc:
        raise CorruptBatch(f"snappy records do not decompress: {exc}") from exc
    if written != claimed:
        raise CorruptBatch("snappy block is shorter than it claims")
    return bytes(out)


def _snappy_decompress(data: bytes, max_bytes: int) -> bytes:
    """xerial-framed snappy (the Java client's) or, without its header, one raw block."""
    if not data.startswith(XERIAL_MAGIC):
        return _snappy_block(data, max_bytes)
    if len(data) < len(XERIAL_HEADER):
        raise CorruptBatch("xerial snappy header is truncated")
    out: list[bytes] = []
    total = 0
    position = len(XERIAL_HEADER)
    end = len(data)
    view = memoryview(data)
    while position < end:
        if end - position < _BLOCK_LENGTH.size:
            raise CorruptBatch("xerial snappy block length is truncated")
        (length,) = _BLOCK_LENGTH.unpack_from(data, position)
        position += _BLOCK_LENGTH.size
        if length < 0 or length > end - position:
            raise CorruptBatch(f"xerial snappy block of {length} bytes does not fit")
        block = _snappy_block(view[position : position + length], max_bytes - total)
        total += len(block)
        out.append(block)
        position += length
    return b"".join(out)


def _lz4_decompress(payload: bytes | memoryview, max_bytes: int) -> bytes:
    d = lz4.frame.LZ4FrameDecompressor()
    try:
        out = d.decompress(bytes(payload), max_length=max_bytes + 1)
    except RuntimeError as exc:  # python-lz4 reports every frame error as RuntimeError
        raise CorruptBatch(f"lz4 records do not decompress: {exc}") from exc
    if len(out) > max_bytes:
        raise _too_large(max_bytes)
    if not d.eof:
        raise CorruptBatch("lz4 frame is truncated")
    if d.unused_data:
        raise CorruptBatch("bytes follow the lz4 frame")
    return bytes(out)


def _zstd_decompress(payload: bytes | memoryview, max_bytes: int) -> bytes:
    """One zstd frame; its declared content size is checked before anything is inflated."""
    data = bytes(payload)
    try:
        declared = zstandard.get_frame_parameters(data).content_size
        if declared != zstandard.CONTENTSIZE_UNKNOWN and declared > max_bytes:
            raise _too_large(max_bytes)
        out = zstandard.ZstdDecompressor().decompress(
            data, max_output_size=max_bytes, allow_extra_data=False
        )
    except zstandard.ZstdError as exc:
        raise CorruptBatch(f"zstd records do not decompress: {exc}") from exc
    if len(out) > max_bytes:
        raise _too_large(max_bytes)
    return out
