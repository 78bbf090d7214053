"""The kernel network mode: namespaces, a bridge and links made and removed by the harness,
and a 3-node cluster in namespaces that survives its links being pulled.

Needs root and iproute2 (CI has both); skipped with the reason otherwise. All traffic stays
on addresses inside the namespaces these tests make, which have no route anywhere else.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rillet.chaos.kernel_network import KernelNetwork, netem_args, unavailable_reason
from rillet.chaos.runner import RunConfig, run_once

pytestmark = pytest.mark.integration

ECHO_PORT = 9092
SERVER = (
    "import socket\n"
    "s = socket.socket()\n"
    "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    f"s.bind(('0.0.0.0', {ECHO_PORT}))\n"
    "s.listen()\n"
    "s.settimeout(60)\n"
    "for _ in range(20):\n"
    "    c, _ = s.accept()\n"
    "    c.sendall(b'hi')\n"
    "    c.close()\n"
)


@pytest.fixture(scope="module")
def netns() -> None:
    """Skip (with the reason) where network namespaces cannot be made: no root, no iproute2."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"kernel network mode: {reason}")


def _namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    return {line.split()[0] for line in out.stdout.splitlines() if line.strip()}


def _greeting(host: str) -> bytes | None:
    try:
        with socket.create_connection((host, ECHO_PORT), timeout=1.0) as s:
            return s.recv(2)
    except OSError:
        return None


def _wait_greeting(host: str, timeout_s: float = 10.0) -> bytes | None:
    deadline = time.monotonic() + timeout_s
    while (got := _greeting(host)) is None and time.monotonic() < deadline:
        time.sleep(0.05)  # poll interval: the server may not be listening yet
    return got


def test_netem_arguments() -> None:
    assert netem_args("eth0", 5.0, 100) == [
        *("qdisc", "replace", "dev", "eth0", "root", "netem"),
        *("delay", "100ms", "10ms", "loss", "5%"),
    ]
    assert netem_args("p1", 0.0, 20)[-3:] == ["delay", "20ms", "2ms"]


@pytest.mark.usefixtures("netns")
def test_links_go_down_and_up_and_every_namespace_is_removed_even_on_failure() -> None:
    before = _namespaces()
    with pytest.raises(RuntimeError, match="boom"), KernelNetwork([1, 2]) as net:
        assert {net.switch_ns, net.client_ns, net.node_ns(1), net.node_ns(2)} <= _namespaces()
        server = subprocess.Popen(net.wrap(2, [sys.executable, "-c", SERVER]))
        try:
            with net.entered():
                host = net.hosts[1]
                assert _wait_greeting(host) == b"hi"
                net.link_down(2)
                net.link_down(2)  # two faults hold it
                assert _greeting(host) is None
                net.link_up(2)
                assert _greeting(host) is None  # still held by the other
                net.link_up(2)
                assert _wait_greeting(host) == b"hi"
                with pytest.raises(OSError):  # no route leaves the namespaces
                    socket.create_connection(("10.99.0.1", 9), timeout=1.0)
        finally:
            server.kill()
            server.wait(10)
        raise RuntimeError("boom")
    assert _namespaces() == before


@pytest.mark.usefixtures("netns")
def test_a_cluster_in_namespaces_survives_a_node_s_link_being_pulled(tmp_path: Path) -> None:
    """Seed 3: node 2's link is down for 3.7 s, then a partition leader's for 5 s (both
    ways; the kernel mode cannot cut one way), with the default timeouts users run."""
    before = _namespaces()
    config = RunConfig(
        seed=3,
        network="kernel",
        duration_s=20,
        faults=("partition",),
        windows=(3.0, 5.0),
        gaps=(2.0, 3.0),
        members=1,
        out_dir=tmp_path,
    )
    started = time.monotonic()
    result = run_once(config)
    print(f"kernel smoke: {time.monotonic() - started:.1f} s, {result.summary['writes']}")
    assert result.ok, [f"{v.check}: {v.message}" for v in result.violations]
    applied = [a for a in result.summary["availability"] if a["kind"] == "partition"]
    assert applied, result.summary["faults"]
    assert result.summary["writes"]["ok"] > 1000
    assert _namespaces() == before
