"""Sending a response's parts: small file regions go with their header in one send (one
segment, one wake-up of the peer); large ones keep sendfile; every region fd is closed."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import trio

from rillet.broker.network.part_sender import send_parts
from rillet.wire.frame import JOIN_REGION_BYTES, BlobPart, FileRegion


def _region(path: Path, data: bytes, position: int = 0) -> FileRegion:
    path.write_bytes(b"-" * position + data)
    fd = os.open(path, os.O_RDONLY)
    return FileRegion(fd, position, len(data))


def _is_closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


class _RecordingStream:
    """Records every send_all; a sendfile would need ``socket`` (absent: it would fail)."""

    def __init__(self) -> None:
        self.sends: list[bytes] = []

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self.sends.append(bytes(data))


async def test_a_small_region_leaves_with_its_header_in_one_send(tmp_path: Path) -> None:
    region = _region(tmp_path / "seg", b"records", position=3)
    stream = _RecordingStream()
    parts: list[BlobPart] = [b"head", region, b"tail"]
    await send_parts(stream, parts)  # type: ignore[arg-type]
    assert stream.sends == [b"headrecordstail"]
    assert _is_closed(region.fd)


async def test_a_large_region_still_goes_by_sendfile(tmp_path: Path) -> None:
    body = os.urandom(JOIN_REGION_BYTES + 1)
    region = _region(tmp_path / "seg", body, position=5)
    a, b = socket.socketpair()
    received = bytearray()
    with a, b:
        stream = trio.SocketStream(trio.socket.from_stdlib_socket(a))
        b.setblocking(False)

        async def drain() -> None:
            expected = 4 + len(body)
            with trio.fail_after(10):
                while len(received) < expected:
                    await trio.lowlevel.wait_readable(b)
                    received.extend(b.recv(1 << 20))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(drain)
            await send_parts(stream, [b"head", region])
    assert bytes(received) == b"head" + body
    assert _is_closed(region.fd)
