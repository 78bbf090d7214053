"""The HTTP endpoint on a real 3-node cluster: probes, /metrics, and the console in Chromium.

Metrics are scraped with urllib and parsed with prometheus_client's own parser. Pausing a
follower (SIGSTOP, always resumed in ``finally``) must make its partition under-replicated on
the partition's leader once replica_lag_time_max_ms has passed, and healthy again after the
follower resumes. Waits poll with deadlines; nothing asserts on timing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_checks import FAST_ELECTIONS, produce_all, wait_for
from prometheus_client.parser import text_string_to_metric_families

from rillet.client import BlockingAdmin, BlockingProducer, NewTopic, TopicPartition
from rillet.launcher.local_cluster import LocalCluster, NodePlan, plan_cluster

pytestmark = pytest.mark.integration

LAG_MS = 2_000
CONFIG = FAST_ELECTIONS + (
    "broker_session_timeout_ms = 4000\nbroker_heartbeat_interval_ms = 300\n"
    f"\n[replication]\nreplica_lag_time_max_ms = {LAG_MS}\n"
)
HISTORY_MS = 200  # the console samples fast here, so its charts fill within a second
MARGIN_S = 40.0  # slack for a loaded machine; the wait ends as soon as the condition holds

EXPECTED_FAMILIES = {
    "rillet_partitions_under_replicated",
    "rillet_partitions_at_min_isr",
    "rillet_partitions_under_min_isr",
    "rillet_isr_shrinks",
    "rillet_isr_expands",
    "rillet_topic_bytes_in",
    "rillet_topic_records_in",
    "rillet_topic_bytes_out",
    "rillet_request_duration_seconds",
    "rillet_acks_all_waiters",
    "rillet_fetch_waiters",
    "rillet_log_fsync_duration_seconds",
    "rillet_log_size_bytes",
    "rillet_log_segments",
    "rillet_raft_role",
    "rillet_raft_term",
    "rillet_raft_leader_id",
    "rillet_raft_commit_index",
    "rillet_raft_elections",
    "rillet_raft_append_latency_seconds",
    "rillet_metadata_applied_index",
    "rillet_metadata_records",
    "rillet_open_connections",
    "rillet_event_loop_lag_seconds",
    "rillet_controller_active",
}
CONTROLLER_FAMILIES = {"rillet_partitions_offline", "rillet_brokers", "rillet_consumer_group_lag"}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    extra = f"history_sample_interval_ms = {HISTORY_MS}\n"
    with LocalCluster(plan_cluster(tmp_path, 3, CONFIG, http_extra=extra)) as c:
        c.start()
        yield c


def get(node: NodePlan, path: str) -> tuple[int, str]:
    url = f"http://{node.host}:{node.http_port}{path}"
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def scrape(node: NodePlan) -> dict[str, Any]:
    status, text = get(node, "/metrics")
    assert status == 200
    return {f.name: f for f in text_string_to_metric_families(text)}


def gauge(node: NodePlan, name: str) -> float:
    family = scrape(node)[name]
    return float(sum(s.value for s in family.samples))


def create_topic(cluster: LocalCluster, name: str) -> None:
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics([NewTopic(name, 1, replication_factor=3)])


def partition_state(cluster: LocalCluster, topic: str) -> tuple[int, list[int]] | None:
    with BlockingAdmin(cluster.bootstrap) as admin:
        p = admin.describe_topics([topic])[0].partitions[0]
    return (p.leader, list(p.isr)) if p.leader >= 0 and len(p.isr) == 3 else None


def test_probes_answer_and_bad_requests_get_clear_statuses(cluster: LocalCluster) -> None:
    for node in cluster.plan.nodes:
        assert get(node, "/health") == (200, "ok\n")
        wait_for("ready", lambda n=node: get(n, "/ready")[0] == 200)
        assert get(node, "/nope")[0] == 404
    node = cluster.plan.nodes[0]
    with socket.create_connection((node.host, node.http_port), timeout=10) as sock:
        sock.sendall(b"POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 405 ")


def test_metrics_of_every_node_and_under_replicated_while_a_follower_is_paused(
    cluster: LocalCluster,
) -> None:
    create_topic(cluster, "watched")
    leader, isr = wait_for("full ISR", lambda: partition_state(cluster, "watched"))
    produce_all(cluster.bootstrap, "watched", [f"v{i}".encode() for i in range(200)])
    families: dict[int, dict[str, Any]] = {}
    for node in cluster.plan.nodes:
        families[node.node_id] = scrape(node)
        missing = EXPECTED_FAMILIES - set(families[node.node_id])
        assert not missing, f"node {node.node_id} lacks {sorted(missing)}"
    controllers = [i for i, f in families.items() if _value(f, "rillet_controller_active") == 1]
    assert len(controllers) == 1
    assert set(families[controllers[0]]) >= CONTROLLER_FAMILIES
    led = families[leader]
    records_in = [
        s.value for s in led["rillet_topic_records_in"].samples if s.labels["topic"] == "watched"
    ]
    assert records_in and records_in[0] >= 200

    follower = next(n for n in isr if n not in (leader, controllers[0]))
    leader_node = cluster.plan.node(leader)
    assert gauge(leader_node, "rillet_partitions_under_replicated") == 0
    cluster.signal(follower, signal.SIGSTOP)
    try:
        wait_for(
            "under-replicated on the leader",
            lambda: gauge(leader_node, "rillet_partitions_under_replicated") > 0,
            LAG_MS / 1000 + MARGIN_S,
        )
    finally:
        cluster.signal(follower, signal.SIGCONT)
    wait_for(
        "in sync again",
        lambda: gauge(leader_node, "rillet_partitions_under_replicated") == 0,
        LAG_MS / 1000 + MARGIN_S,
    )
    assert gauge(leader_node, "rillet_isr_shrinks") >= 1


def _value(families: dict[str, Any], name: str) -> float:
    return float(sum(s.value for s in families[name].samples))


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=5000",  # lets the page's fetch of /api/cluster complete
]


def chromium(args: list[str], profile: Path) -> str:
    binary = shutil.which("chromium")
    assert binary is not None
    result = subprocess.run(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        timeout=120,
        check=True,
    )
    return result.stdout.decode(errors="replace")


def test_the_console_shows_brokers_topics_and_partitions_in_chromium(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    create_topic(cluster, "console-topic")
    wait_for("full ISR", lambda: partition_state(cluster, "console-topic"))
    node = cluster.plan.nodes[0]
    status, body = get(node, "/api/cluster")
    assert status == 200
    doc = json.loads(body)
    assert {b["id"] for b in doc["brokers"]} == {1, 2, 3}
    # The controller hears every broker's applied index in its heartbeats.
    controller = cluster.plan.node(doc["quorum"]["controller_id"])
    wait_for(
        "applied indexes on the controller",
        lambda: all(
            b["applied_index"] is not None
            for b in json.loads(get(controller, "/api/cluster")[1])["brokers"]
        ),
    )
    url = f"http://{node.host}:{node.http_port}/"
    dom = chromium(["--dump-dom", url], tmp_path / "profile")
    assert 'data-loaded="true"' in dom
    for broker_id in (1, 2, 3):
        assert f'data-broker="{broker_id}"' in dom
    assert 'data-topic="console-topic" data-partition="0"' in dom
    assert "in sync" in dom
    shot = tmp_path / "console.png"
    chromium([f"--screenshot={shot}", "--window-size=1280,900", url], tmp_path / "profile2")
    assert shot.read_bytes().startswith(b"\x89PNG")
    check_the_drawn_views(cluster, tmp_path)


# A directory (docs/images) to save a screenshot of each view in (docs/monitoring.md).
SHOTS_DIR = os.environ.get("RILLET_CONSOLE_SCREENSHOTS", "")


def check_the_drawn_views(cluster: LocalCluster, tmp_path: Path) -> None:
    """Charts, the message browser, topic configs and log dirs, as Chromium renders them."""
    topic = "console-topic"
    with BlockingProducer(cluster.bootstrap, acks=-1) as producer:
        for i in range(20):
            headers = [("trace", b"t-7")] if i == 0 else None
            value = b'{"order": 7, "item": "kettle"}' if i == 0 else f"v{i}".encode()
            producer.send(topic, value, key=b"order-7" if i == 0 else None, headers=headers)
        producer.flush()
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.alter_topic_configs(topic, set={"retention.ms": "3600000"})
        admin.set_group_offsets("console-group", {TopicPartition(topic, 0): 5})
    leader = cluster.plan.node(wait_for("full ISR", lambda: partition_state(cluster, topic))[0])
    base = f"http://{leader.host}:{leader.http_port}"

    def traffic_drawn() -> bool:
        body = get(leader, "/console/charts")[1]
        return bool(re.search(rf'data-series="{topic}" data-points="([2-9]|\d\d+)"', body)) and (
            'data-series="console-group"' in body
        )

    wait_for("traffic in the charts", traffic_drawn, MARGIN_S)
    views = {
        "charts": "/console/charts",
        "browser": f"/console/browse?topic={topic}&partition=0&offset=0&format=json",
        "configs": "/console/configs",
        "logdirs": "/console/logdirs",
    }
    dom = {
        name: chromium(["--dump-dom", base + path], tmp_path / name) for name, path in views.items()
    }
    # Charts: a polyline per series whose points attribute holds data-points coordinates.
    line = re.search(
        rf'<polyline data-series="{topic}" data-points="(\d+)" points="([^"]+)"', dom["charts"]
    )
    assert line is not None
    assert len(line.group(2).split()) == int(line.group(1)) >= 2
    assert re.search(r'data-series="console-group" data-points="\d+"', dom["charts"])
    assert 'data-series="cluster"' in dom["charts"]  # under-replicated partitions
    # The browser: the produced key, the value pretty-printed as JSON, a header, the CRC.
    assert "order-7" in dom["browser"]
    assert '"item": "kettle"' in dom["browser"]
    assert "trace: <pre>t-7</pre>" in dom["browser"]
    assert '<span class="crc">valid</span>' in dom["browser"]
    assert dom["browser"].count("<tr>") == 21  # the header row and the 20 records
    # Configs: the override set above, and a default.
    assert re.search(r'class="override" data-config="retention.ms">3600000<', dom["configs"])
    assert 'data-config="segment.bytes"' in dom["configs"]
    # Log dirs: the partition's bytes on this node.
    size = re.search(rf'data-size="{topic}-0">(\d+)<', dom["logdirs"])
    assert size is not None and int(size.group(1)) > 0
    if not SHOTS_DIR:
        return  # each screenshot costs a Chromium start; the docs' are made on request
    for name, path in views.items():
        shot = Path(SHOTS_DIR) / f"console-{name}.png"
        chromium([f"--screenshot={shot}", "--window-size=1100,760", base + path], tmp_path / name)
        assert shot.read_bytes().startswith(b"\x89PNG")


def test_cluster_up_prints_the_metrics_endpoints_before_the_bootstrap_lists(
    tmp_path: Path,
) -> None:
    argv = [sys.executable, "-m", "rillet.cli.main", "cluster"]
    base = ["--data-dir", str(tmp_path / "c")]
    up = subprocess.run(
        [*argv, "up", "--nodes", "1", *base],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    try:
        assert up.returncode == 0, up.stderr
        lines = up.stdout.strip().splitlines()
        assert lines[-1].startswith("bootstrap servers: ")
        metrics = next(line for line in lines if line.startswith("metrics endpoints: "))
        url = metrics.removeprefix("metrics endpoints: ")
        assert url.startswith("http://127.0.0.1:") and url.endswith("/metrics")
        with urllib.request.urlopen(url, timeout=10) as resp:
            families = {f.name for f in text_string_to_metric_families(resp.read().decode())}
        assert "rillet_raft_role" in families
    finally:
        subprocess.run([*argv, "down", *base], check=False, capture_output=True, timeout=60)


def test_an_http_port_in_use_stops_the_node_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = tmp_path / "node.toml"
        config.write_text(f"[listener]\nport = 0\n\n[http]\nenabled = true\nport = {port}\n")
        argv = [sys.executable, "-m", "rillet.cli.main", "node", "--config", str(config)]
        result = subprocess.run(
            [*argv, "--data-dir", str(tmp_path / "data")],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2
    assert f"cannot listen for http on 127.0.0.1:{port}: " in result.stderr
    assert "Traceback" not in result.stderr
