"""What peers without the cluster secret can take of a real node's Raft port (our own
engine, the default): hellos that declare 60 MiB cost the node no memory, and connections
beyond the per-address cap are closed before the node greets them. One node, default
limits; RSS is read from /proc. Every wait has a deadline."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from node_process import NodeProcess

from rillet.broker.config.quorum_config import QuorumConfig
from rillet.raft.transport import MAGIC, NONCE_BYTES

pytestmark = pytest.mark.integration

MIB = 1024 * 1024
GREETING_BYTES = len(MAGIC) + NONCE_BYTES


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def raft_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[NodeProcess, int]]:
    base = tmp_path_factory.mktemp("raft-port")
    (base / "logs").mkdir()
    raft_port = free_port()
    node = NodeProcess(
        base / "data", base / "logs", config_text=f"[quorum]\nraft_port = {raft_port}\n"
    )
    try:
        node.start()
        yield node, raft_port
    finally:
        node.kill()


def greeting_of(sock: socket.socket, timeout_s: float) -> bytes:
    """What the node sends first (b'' when it closes first)."""
    sock.settimeout(timeout_s)
    got = b""
    try:
        while len(got) < GREETING_BYTES:
            chunk = sock.recv(GREETING_BYTES - len(got))
            if not chunk:
                break
            got += chunk
    except ConnectionResetError:
        pass
    return got


def test_twelve_60_mib_hellos_grow_rss_by_under_50_mb(raft_node: tuple[NodeProcess, int]) -> None:
    node, raft_port = raft_node
    assert node.proc is not None
    before = rss_bytes(node.proc.pid)
    stop_at = time.monotonic() + 3.0
    socks = [socket.create_connection(("127.0.0.1", raft_port), timeout=2) for _ in range(12)]

    def push(sock: socket.socket) -> None:  # declare a 60 MiB hello, then send it
        sock.settimeout(0.5)
        chunk = b"\0" * MIB
        try:
            sock.sendall(struct.pack(">I", 60 * MIB))
            sent = 0
            while sent < 60 * MIB and time.monotonic() < stop_at:
                try:
                    sent += sock.send(chunk)
                except TimeoutError:
                    continue
        except OSError:
            return  # closed by the node

    threads = [threading.Thread(target=push, args=(s,)) for s in socks]
    peak = before
    try:
        for t in threads:
            t.start()
        while alive := [t for t in threads if t.is_alive()]:  # each ends by stop_at
            peak = max(peak, rss_bytes(node.proc.pid))
            alive[0].join(0.05)  # and sample RSS every 50 ms meanwhile
        peak = max(peak, rss_bytes(node.proc.pid))
    finally:
        for t in threads:
            t.join(5)
        for s in socks:
            s.close()
    assert node.alive()
    assert peak - before < 50 * MIB, f"RSS grew by {(peak - before) / MIB:.0f} MiB"


def test_connections_beyond_the_per_address_cap_are_closed_ungreeted(
    raft_node: tuple[NodeProcess, int],
) -> None:
    node, raft_port = raft_node
    cap = QuorumConfig().raft_max_connections_per_ip
    socks = []
    try:
        greeted = []
        for _ in range(cap + 3):
            sock = socket.create_connection(("127.0.0.1", raft_port), timeout=2)
            socks.append(sock)
            greeted.append(greeting_of(sock, timeout_s=5.0).startswith(MAGIC))
        assert greeted == [True] * cap + [False] * 3
    finally:
        for s in socks:
            s.close()
    assert node.alive()
