"""Sends a response's parts on a socket: buffered bytes with ``send_all``, log file regions
with ``os.sendfile``. Shared by the native and the Kafka-protocol connections, so both serve
fetches from the page cache without copying records through Python.

A small region (up to ``JOIN_REGION_BYTES``) is read into memory and joined with the frame
header before it instead: header and records then leave in one send, so the peer receives
one segment and wakes once per response rather than once for the header and again for the
records (a trio ``send_all`` yields between the two sends, so they are rarely merged by the
kernel). For a few KiB, copying costs less than the extra segment and wake-up; larger
regions keep ``sendfile``.

Every region owns a duplicated fd; whatever happens, each is closed exactly once. Regions
are read through ``disk_io`` (``pread``, ``sendfile``), so a disk fault reaches them too: a
region that cannot be read ends the connection with one line in the log
(:class:`RegionUnreadable`): the frame is cut short, never completed with other bytes.
"""

from __future__ import annotations

import logging

import trio

from rillet.broker.network.served_stream import ServedStream
from rillet.wire import disk_io
from rillet.wire.frame import JOIN_REGION_BYTES, BlobPart, FileRegion

log = logging.getLogger(__name__)


TLS_CHUNK_BYTES = 256 * 1024


class RegionUnreadable(trio.BrokenResourceError):
    """The log file behind a region failed to read (EIO): the reply cannot be completed,
    so its connection ends (the peer sees a cut frame and asks again)."""


def _unreadable(exc: OSError) -> RegionUnreadable:
    log.error("reading log bytes for a reply failed: %s; closing the connection", exc)
    return RegionUnreadable(f"log bytes unreadable: {exc}")


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
        try:
            data = disk_io.pread(region.fd, min(TLS_CHUNK_BYTES, end - position), position)
        except OSError as exc:
            raise _unreadable(exc) from exc
        if not data:
            raise trio.BrokenResourceError("file region ended early (segment truncated?)")
        await stream.send_all(data)
        position += len(data)


def _release(parts: list[BlobPart], i: int, region: FileRegion) -> None:
    """``parts[i]`` (``region``) is sent or read: blank its slot and close its fd once."""
    parts[i] = b""
    disk_io.close(region.fd)


def _read_region(region: FileRegion) -> bytes:
    try:
        data = disk_io.pread(region.fd, region.length, region.position)
    except OSError as exc:
        raise _unreadable(exc) from exc
    if len(data) != region.length:
        raise trio.BrokenResourceError("file region ended early (segment truncated?)")
    return data


async def _sendfile(stream: trio.SocketStream, region: FileRegion) -> None:
    sock = stream.socket
    sock_fd = sock.fileno()
    position, remaining = region.position, region.length
    while remaining > 0:
        try:
            sent = disk_io.sendfile(sock_fd, region.fd, position, remaining)
        except BlockingIOError:
            await trio.lowlevel.wait_writable(sock)
            continue
        except OSError as exc:
            if isinstance(exc, ConnectionError):
                raise  # the peer went away
            raise _unreadable(exc) from exc
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
                disk_io.close(part.fd)
            except OSError:
                pass
