"""What one client can take of a real node: request bytes in flight, connections, time.

Hostile clients are raw sockets. Limits are set low in each test so the effect shows fast;
RSS is read from /proc. Waits poll with deadlines; nothing asserts on timings beyond
generous upper bounds.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cluster_checks import raft_leader, views, wait_for
from node_process import NodeProcess

from rillet.client import BlockingAdmin, NewTopic
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = pytest.mark.integration

MIB = 1024 * 1024


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def closed_by_peer(sock: socket.socket, timeout_s: float) -> bool:
    """Whether the node closes ``sock`` within ``timeout_s`` (EOF or reset)."""
    sock.settimeout(timeout_s)
    try:
        while True:
            if not sock.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def test_unfinished_frames_stay_within_queued_max_request_bytes(
    node_factory: Callable[..., NodeProcess],
) -> None:
    budget = 120 * MIB  # >= max_frame_bytes (100 MiB) + one 1 MiB read + 8 MiB pre-login
    node = node_factory(
        f"[limits]\nqueued_max_request_bytes = {budget}\nframe_read_timeout_ms = 8000\n"
    ).start()
    assert node.proc is not None and node.port is not None
    with BlockingAdmin(node.bootstrap) as admin:
        admin.create_topics([NewTopic("warm-up", 1)])
    before = rss_bytes(node.proc.pid)
    senders = [socket.create_connection(("127.0.0.1", node.port)) for _ in range(4)]
    sent = [0] * len(senders)
    held_back = [False] * len(senders)  # a send timed out: the node had stopped reading
    stop_at = time.monotonic() + 5.0

    def push(i: int) -> None:  # announce 100 MiB, then send up to 99 MiB of it
        s = senders[i]
        s.settimeout(0.5)
        s.sendall(struct.pack(">I", 100 * MIB))
        chunk = b"\0" * MIB
        while sent[i] < 99 * MIB and time.monotonic() < stop_at:
            try:
                sent[i] += s.send(chunk)
            except TimeoutError:
                held_back[i] = True  # the node stopped reading: its budget is spent
                continue
            except OSError:
                return

    threads = [threading.Thread(target=push, args=(i,)) for i in range(len(senders))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        grown = rss_bytes(node.proc.pid) - before
        print(f"sent {sum(sent) / MIB:.0f} MiB, node RSS grew {grown / MIB:.0f} MiB")
        # More was offered (4 x 99 MiB) than the node took in: it stopped reading. What the
        # kernel's socket buffers took on top of the budget varies, so the bytes the senders
        # got rid of are not compared with the budget itself.
        assert any(held_back) and sum(sent) < len(senders) * 99 * MIB
        assert grown < budget + 64 * MIB
        # The frame deadline drops the senders; their budget comes back, clients work again.
        assert all(closed_by_peer(s, 30) for s in senders)
        with BlockingAdmin(node.bootstrap) as admin:
            admin.create_topics([NewTopic("after", 1)])
    finally:
        for s in senders:
            s.close()


def test_idle_and_trickling_connections_are_closed_on_time(
    node_factory: Callable[..., NodeProcess],
) -> None:
    node = node_factory(
        "[kafka_listener]\nenabled = true\nport = 0\n"
        "[limits]\nconnections_max_idle_ms = 1500\nframe_read_timeout_ms = 1500\n"
    ).start()
    assert node.port is not None
    ready = json.loads((node.log_dir / f"ready-{node.starts}.json").read_text())
    for port in (node.port, int(ready["kafka_port"])):
        idle = socket.create_connection(("127.0.0.1", port))
        trickler = socket.create_connection(("127.0.0.1", port))
        try:
            trickler.sendall(struct.pack(">I", 1000))  # a frame that will never finish
            started = time.monotonic()
            trickled = 0
            # One byte every 0.3 s: never idle for 1.5 s, but the frame is never finished.
            while time.monotonic() - started < 20:
                try:
                    trickler.send(b"x")
                    trickled += 1
                except OSError:
                    break
                if closed_by_peer(trickler, 0.3):
                    break
            trickle_s = time.monotonic() - started
            assert trickled >= 3 and trickle_s < 20, f"trickler open for {trickle_s:.1f}s"
            assert closed_by_peer(idle, 20), "the idle connection was not closed"
            print(f"port {port}: trickler closed after {trickle_s:.1f}s")
        finally:
            idle.close()
            trickler.close()
    log_text = "".join(p.read_text(errors="replace") for p in node.log_dir.glob("node-*.log"))
    assert "frame_read_timeout_ms" in log_text and "connections_max_idle_ms" in log_text


@pytest.fixture
def limited_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    config = (
        "broker_session_timeout_ms = 2000\nbroker_heartbeat_interval_ms = 300\n"
        "[limits]\nmax_connections = 60\nmax_connections_per_ip = 50\n"
        "node_connection_reserve = 16\nnode_handshake_timeout_ms = 2000\n"
    )
    with LocalCluster(plan_cluster(tmp_path, 3, config, kafka=False)) as c:
        c.start()
        yield c


def _connect_from(source: str, port: int) -> socket.socket | None:
    s = socket.socket()
    try:
        s.bind((source, 0))
        s.settimeout(2)
        s.connect(("127.0.0.1", port))
    except OSError:
        s.close()
        return None
    return s


def test_many_connections_from_one_address_do_not_stop_clients_or_heartbeats(
    limited_cluster: LocalCluster,
) -> None:
    cluster = limited_cluster
    leader = wait_for("a leader", lambda: raft_leader(cluster))
    port = cluster.plan.node(leader).port
    flood = [s for s in (_connect_from("127.0.0.2", port) for _ in range(300)) if s]
    try:
        closed = sum(closed_by_peer(s, 0.05) for s in flood)
        # Beyond 50 from that address (and 16 reserved slots that must authenticate as a
        # node within 2 s), the node closes connections at once; the reserved ones follow.
        closed += sum(closed_by_peer(s, 4) for s in flood[50:])
        assert closed >= len(flood) - 50
        # Another client (another address) still gets in and is served.
        with BlockingAdmin(cluster.plan.node(leader).bootstrap) as admin:
            admin.create_topics([NewTopic("still-served", 3, replication_factor=3)])
        # A broker that restarts now registers and is unfenced through the crowded node,
        # and no broker misses its heartbeats (session: 2 s) while the flood holds.
        other = next(n.node_id for n in cluster.plan.nodes if n.node_id != leader)
        cluster.kill(other)
        cluster.spawn(other)
        cluster.wait_ready([other])

        def all_unfenced() -> bool | None:
            answer = views(cluster, [leader]).get(leader)
            brokers = answer.brokers if answer is not None else []
            return True if len(brokers) == 3 and not any(b.fenced for b in brokers) else None

        wait_for("every broker unfenced", all_unfenced, timeout_s=30)
        deadline = time.monotonic() + 5  # three sessions: still nobody fenced
        while time.monotonic() < deadline:
            assert all_unfenced(), "a broker was fenced during the flood"
            time.sleep(0.2)
        with BlockingAdmin(cluster.bootstrap) as admin:
            (topic,) = admin.describe_topics(["still-served"])
            assert all(len(p.isr) == 3 for p in topic.partitions)
    finally:
        for s in flood:
            s.close()
