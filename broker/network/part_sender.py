"""Sends a response's parts on a socket: buffered bytes with ``send_all``, log file regions
with ``os.sendfile``. Shared by the native and the Kafka-protocol connections, so both serve
fetches from the page cache without copying records through Python.

A small region (up to ``JOIN_REGION_BYTES``) is read into memory and joined with the frame
header before it instead: header and records then leave in one send, so the peer receives
one segment and wakes once per response rather than once for the header and again for the
records (a trio ``send_all`` yields between the two sends, so they are rarely merged by the
kernel). For a few KiB, copying costs less than the extra segment and wake-up; larger
regions keep ``sendfile``.

Every region owns a duplicated fd; whatever happens, each is closed exactly once.
"""

from __future__ import annotations

import os

import trio

from rillet.broker.network.served_stream import ServedStream
from rillet.wire.frame import JOIN_REGION_BYTES, BlobPart, FileRegion

TLS_CHUNK_BYTES = 256 * 1024


async def send_parts(stream: ServedStream, parts: list[BlobPart]) -> None:
    """Send ``parts`` in order, closing every region's fd (also on failure). Over TLS a
    region is read and sent in chunks of ``TLS_CHUNK_BYTES`` (the socket's bytes must be
    encrypted, so ``sendfile`` cannot be used)."""
    try:
        buffered: list[bytes | bytearray | memoryview] = []
        for i, part in enumerate(parts):
            if isinstance(part, FileRegion) and part.length <= JOIN_REGION_BYTES:
                buffered.append(_read_region(part))
                _release(parts, i, part)
            elif isinstance(part, FileRegion):
                if buffered:
                    await stream.send_all(b"".join(buffered))
                    buffered = []
                if isinstance(stream, trio.SocketStream):
                    await _sendfile(stream, part)
                else:
                    await _send_region_read(stream, part)
                _release(parts, i, part)
            else:
                buffered.append(part)
        if buffered:
            await stream.send_all(b"".join(buffered))
    finally:
        close_regions(parts)


async def _send_region_read(stream: ServedStream, region: FileRegion) -> None:
    position, end = region.position, region.position + region.length
    while position < end:
        data = os.pread(region.fd, min(TLS_CHUNK_BYTES, end - position), position)
        if not data:
            raise trio.BrokenResourceError("file region ended early (segment truncated?)")
        await stream.send_all(data)
        position += len(data)


def _release(parts: list[BlobPart], i: int, region: FileRegion) -> None:
    """``parts[i]`` (``region``) is sent or read: blank its slot and close its fd once."""
    parts[i] = b""
    os.close(region.fd)


def _read_region(region: FileRegion) -> bytes:
    data = os.pread(region.fd, region.length, region.position)
    if len(data) != region.length:
        raise trio.BrokenResourceError("file region ended early (segment truncated?)")
    return data


async def _sendfile(stream: trio.SocketStream, region: FileRegion) -> None:
    sock = stream.socket
    sock_fd = sock.fileno()
    position, remaining = region.position, region.length
    while remaining > 0:
        try:
            sent = os.sendfile(sock_fd, region.fd, position, remaining)
        except BlockingIOError:
            await trio.lowlevel.wait_writable(sock)
            continue
        if sent == 0:
            raise trio.BrokenResourceError("file region ended early (segment truncated?)")
        position += sent
        remaining -= sent
    await trio.lowlevel.checkpoint()


def join_small_parts(parts: list[BlobPart], max_bytes: int) -> bytes | None:
    """The parts as one bytes object, file regions read (and their fds closed), when they
    total under ``max_bytes`` and no region is over ``JOIN_REGION_BYTES``; else None with
    the parts untouched."""
    total = 0
    for part in parts:
        if isinstance(part, FileRegion):
            if part.length > JOIN_REGION_BYTES:
                return None
            total += part.length
        else:
            total += len(part)
    if total >= max_bytes:
        return None
    chunks: list[bytes | bytearray | memoryview] = []
    try:
        for i, part in enumerate(parts):
            if isinstance(part, FileRegion):
                chunks.append(_read_region(part))
                _release(parts, i, part)
            else:
                chunks.append(part)
    finally:
        close_regions(parts)
    return chunks[0] if len(chunks) == 1 and isinstance(chunks[0], bytes) else b"".join(chunks)


def buffered_len(part: BlobPart) -> int:
    """Bytes a part holds in memory (a file region holds none)."""
    return 0 if isinstance(part, FileRegion) else len(part)


def close_regions(parts: list[BlobPart]) -> None:
    """Close every region's fd once: each is blanked in place, so a second call is a no-op."""
    for i, part in enumerate(parts):
        if isinstance(part, FileRegion):
            parts[i] = b""
            try:
                os.close(part.fd)
            except OSError:
                pass
