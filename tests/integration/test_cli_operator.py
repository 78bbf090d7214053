"""The operator's command line against real processes (issue 19): one-line start-up errors
of ``rillet node``, a quiet exit 141 under ``| head``, consuming by time, as a group and as
JSON, and ``cluster status`` / ``topics describe --under-replicated`` against any cluster."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_checks import agreed_state, raft_leader, wait_for
from node_process import NodeProcess

from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = pytest.mark.integration


def rillet(
    bootstrap: str | None, command: str, stdin: str = "", timeout_s: float = 60
) -> subprocess.CompletedProcess[str]:
    tail = [] if bootstrap is None else ["--bootstrap", bootstrap]
    return subprocess.run(
        [sys.executable, "-m", "rillet.cli.main", *shlex.split(command), *tail],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The only ERROR line of a node that refused to start (exit 2, no traceback)."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if " ERROR " in line]
    assert len(errors) == 1, result.stderr
    return errors[0]


# -- rillet node: start-up errors ----------------------------------------------------------


def test_node_with_its_port_in_use_says_so(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = rillet(None, f"node --port {port} --data-dir {tmp_path / 'd'}")
    line = one_error_line(result)
    assert line.endswith(
        f"address already in use: another process holds a port (listener.port {port})"
    )


def test_node_with_an_unusable_data_dir_says_so(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    line = one_error_line(rillet(None, f"node --port 0 --data-dir {blocker / 'd'}"))
    assert f"data_dir {blocker / 'd'} is not usable" in line and "Not a directory" in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_node_with_a_read_only_data_dir_says_so(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        line = one_error_line(rillet(None, f"node --port 0 --data-dir {ro / 'd'}"))
    finally:
        ro.chmod(0o755)
    assert f"data_dir {ro / 'd'} is not usable" in line and "Permission denied" in line


def test_node_with_an_out_of_range_port_names_the_key(tmp_path: Path) -> None:
    config = tmp_path / "node.toml"
    config.write_text("[limits]\nmax_connections = 0\n")
    line = one_error_line(rillet(None, f"node --config {config} --data-dir {tmp_path / 'd'}"))
    assert line.endswith("limits.max_connections must be >= 1, got 0")


def test_node_with_a_short_http_token_file_names_the_key(tmp_path: Path) -> None:
    token = tmp_path / "http.token"
    token.write_text("short\n")
    config = tmp_path / "node.toml"
    config.write_text(f'[http]\nenabled = true\nport = 0\nauth_token_file = "{token}"\n')
    args = f"node --port 0 --config {config} --data-dir {tmp_path / 'd'}"
    line = one_error_line(rillet(None, args))
    assert f"http.auth_token_file {token}: the token must be one word of at least 16" in line


# -- the console pair ----------------------------------------------------------------------


def test_consume_into_head_exits_141_quietly(node: NodeProcess) -> None:
    b = node.bootstrap
    assert rillet(b, "topics create piped --partitions 1").returncode == 0
    lines = "".join(f"record-{i:08d}\n" for i in range(30_000))  # well over a pipe's buffer
    assert rillet(b, "produce piped", stdin=lines).returncode == 0
    argv = [sys.executable, "-m", "rillet.cli.main", "consume", "piped"]
    argv += ["--from-beginning", "--timeout-ms", "5000", "--bootstrap", b]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline() == b"record-00000000\n"
        proc.stdout.close()  # what `head -1` does
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 141
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert err == ""


def test_consume_by_time_as_json_and_as_a_group(node: NodeProcess) -> None:
    b = node.bootstrap
    assert rillet(b, "topics create timed --partitions 2").returncode == 0
    fmt = "--timestamp-separator '|' --header-separator '|' --key-separator '|'"
    first = int(time.time() * 1000)
    stdin = "".join(f"{first + i * 1000}|n={i}|k{i}|v{i}\n" for i in range(6))
    produced = rillet(b, f"produce timed {fmt}", stdin=stdin)
    assert produced.returncode == 0, produced.stderr

    late = rillet(b, f"consume timed --from-time {first + 3000} --timeout-ms 1500 --output json")
    assert late.returncode == 0, late.stderr
    records = sorted(map(json.loads, late.stdout.splitlines()), key=lambda r: r["timestamp"])
    assert [r["value"] for r in records] == ["v3", "v4", "v5"]
    assert records[0]["key"] == "k3" and records[0]["headers"] == [{"key": "n", "value": "3"}]
    assert records[0]["timestamp"] == first + 3000

    group = "consume timed --group readers --from-beginning --timeout-ms 3000"
    seen: list[str] = []
    for _ in range(2):  # each run continues after the previous one's last printed record
        part = rillet(b, f"{group} --max-messages 3")
        assert part.returncode == 0, part.stderr
        assert "consumed 3 records (group readers)" in part.stderr
        seen += part.stdout.split()
    assert sorted(seen) == [f"v{i}" for i in range(6)]
    rest = rillet(b, group)
    assert rest.returncode == 0 and rest.stdout == "", rest.stderr
    described = json.loads(rillet(b, "groups describe readers --output json").stdout)
    assert {p["lag"] for p in described["partitions"]} == {0}


# -- any cluster ---------------------------------------------------------------------------


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    config = (
        "broker_session_timeout_ms = 60000\n"  # a paused node stays registered and unfenced
        "[replication]\nreplica_lag_time_max_ms = 1000\n"
    )
    with LocalCluster(plan_cluster(tmp_path, 3, config)) as c:
        c.start()
        try:
            yield c
        finally:
            for n in c.plan.nodes:
                if c.alive(n.node_id):
                    c.signal(n.node_id, signal.SIGCONT)


def test_status_and_under_replicated_partitions_of_any_cluster(cluster: LocalCluster) -> None:
    wait_for("agreement", lambda: agreed_state(cluster, [1, 2, 3]))
    leader = wait_for("a raft leader", lambda: raft_leader(cluster))
    follower = next(n for n in cluster.plan.nodes if n.node_id != leader)
    other = next(n for n in cluster.plan.nodes if n.node_id not in (leader, follower.node_id))
    created = rillet(other.bootstrap, "topics create wide --partitions 6 --replication-factor 3")
    assert created.returncode == 0, created.stderr
    assert rillet(other.bootstrap, "topics describe --under-replicated").stdout == ""

    healthy = rillet(None, f"cluster status --bootstrap {other.bootstrap}")
    assert healthy.returncode == 0, healthy.stderr
    assert f"leader {leader}, term" in healthy.stdout
    assert "brokers: 3, fenced: 0" in healthy.stdout
    assert "partitions: 6, under-replicated: 0" in healthy.stdout

    described = json.loads(rillet(other.bootstrap, "topics describe wide --output json").stdout)
    # The paused node's own partitions keep their ISR (their leader is the one paused and
    # stays registered); every other partition loses it from its ISR, each leader in turn.
    expected = sum(1 for p in described[0]["partitions"] if p["leader"] != follower.node_id)
    cluster.signal(follower.node_id, signal.SIGSTOP)

    def under_replicated() -> list[dict[str, object]] | None:
        result = rillet(other.bootstrap, "topics describe --under-replicated --output json")
        topics = json.loads(result.stdout) if result.returncode == 0 else []
        if not topics or len(topics[0]["partitions"]) < expected:
            return None
        return topics

    (wide,) = wait_for("under-replicated partitions", under_replicated, timeout_s=60)
    partitions = wide["partitions"]
    assert isinstance(partitions, list)
    assert all(follower.node_id not in p["isr"] for p in partitions)

    status = rillet(None, f"cluster status --bootstrap {other.bootstrap}")
    assert status.returncode == 0, status.stderr
    assert f"{follower.bootstrap}  busy (no answer in 5s)" in status.stdout
    assert f"under-replicated: {len(partitions)}" in status.stdout
    assert "under-replicated partitions: wide-" in status.stdout

    cluster.signal(follower.node_id, signal.SIGCONT)
    wait_for(
        "the ISR expanding again",
        lambda: rillet(other.bootstrap, "topics describe --under-replicated").stdout == "",
        timeout_s=60,
    )


def test_status_of_nothing_listening_is_down() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connections are refused
        result = rillet(None, f"cluster status --bootstrap 127.0.0.1:{port}")
    assert result.returncode == 1
    assert result.stdout.strip() == "no node reachable (connections refused): the cluster is down"
