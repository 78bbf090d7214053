"""Log bytes served to clients and followers go through the fault layer too: a read fault
on a segment reaches a fetch answer's region whether it is read (small regions, TLS) or
sent with sendfile (large ones). The answer is then cut off (its connection ends, one line
in the log), never completed with other bytes; and a region taken for an answer fails the
read, which the fetch handlers answer with STORAGE_ERROR."""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path

import pytest
import trio
from lazy_disk_layer import install_lazy_disk

from rillet.broker.handlers.replica_fetch import hold_region
from rillet.broker.network.part_sender import JOIN_REGION_BYTES, RegionUnreadable, send_parts
from rillet.chaos.lazy_disk import DiskFaults, LazyDisk
from rillet.wire import disk_io
from rillet.wire.frame import BlobPart, FileRegion


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LazyDisk:
    return install_lazy_disk(monkeypatch, tmp_path)


def _segment(tmp_path: Path, body: bytes) -> int:
    """A read descriptor of a segment holding ``body``, opened through the layer."""
    path = tmp_path / "data" / "chaos-0" / "00000000000000000000.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    return disk_io.open_fd(path, os.O_RDONLY)


async def _send(parts: list[BlobPart]) -> tuple[bytes, BaseException | None]:
    """Send ``parts`` on one end of a socket pair: what the other end received, and what
    the send raised."""
    a, b = socket.socketpair()
    received = bytearray()
    raised: BaseException | None = None
    with a, b:
        stream = trio.SocketStream(trio.socket.from_stdlib_socket(a))
        try:
            await send_parts(stream, parts)
        except RegionUnreadable as exc:
            raised = exc
        b.setblocking(False)
        try:
            while chunk := b.recv(1 << 20):
                received.extend(chunk)
        except BlockingIOError:
            pass
    return bytes(received), raised


@pytest.mark.parametrize("size", [100, JOIN_REGION_BYTES + 1])  # read, then sendfile
async def test_a_region_that_fails_to_read_is_never_sent(
    disk: LazyDisk, tmp_path: Path, size: int
) -> None:
    body = os.urandom(size)
    fd = _segment(tmp_path, body)
    region = FileRegion(disk_io.dup(fd), 0, size)
    disk.faults = DiskFaults(eio_read="/chaos-0/")
    received, raised = await _send([b"head", region])
    assert raised is not None
    assert b"head".startswith(received)  # cut off before the records, nothing else sent
    with pytest.raises(OSError):  # its descriptor was released
        os.fstat(region.fd)
    disk.faults = DiskFaults()
    again = FileRegion(disk_io.dup(fd), 0, size)
    assert await _send([b"head", again]) == (b"head" + body, None)
    disk_io.close(fd)


def test_taking_a_region_for_an_answer_fails_the_read(disk: LazyDisk, tmp_path: Path) -> None:
    fd = _segment(tmp_path, b"x" * 100)
    disk.faults = DiskFaults(eio_read="/chaos-0/")
    with pytest.raises(OSError) as raised:
        hold_region(FileRegion(fd, 0, 100))  # small: read now
    assert raised.value.errno == errno.EIO
    disk_io.close(fd)
