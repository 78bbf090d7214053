"""/metrics, /ready and /api/cluster over real partition replicas and metadata state.

The node's state is built the way a node builds it (controller decisions applied to a
MetadataState, partitions opened by the reconciler); only the broker's registration
lifecycle is a stand-in. Scrapes go through the endpoint's route and prometheus_client's
parser, as Prometheus would read them.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import trio
from prometheus_client.parser import text_string_to_metric_families
from sim_quorum import SimCluster

from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.cluster.metadata_view import MetadataView
from rillet.broker.config import HttpConfig, NodeConfig, TasksConfig, load_config
from rillet.broker.errors import ConfigError
from rillet.broker.http.access import AccessPolicy
from rillet.broker.http.decision_journal import DecisionJournal, JournalingLog
from rillet.broker.http.endpoint import HttpEndpoint
from rillet.broker.http.metered_dispatcher import TimedReply
from rillet.broker.http.node_probe import NodeProbe, RaftActivity
from rillet.broker.http.request_parser import parse_head
from rillet.broker.http.server import HttpResponse
from rillet.broker.replica.log_cleaner import LogCleaner
from rillet.broker.replica.partition_reconciler import PartitionReconciler
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.records import (
    FenceBroker,
    PartitionChange,
    RegisterBroker,
    encode_entry,
)
from rillet.metadata_quorum.state import MetadataState
from rillet.raft.quorum import Entry
from rillet.wire.batch import build_batch

NODE = 1


def apply_all(state: MetadataState, decision: Decision) -> None:
    assert decision.error == 0, decision.message
    for record in decision.records:
        state.apply(state.last_applied_index + 1, record)


@pytest.fixture
def node(tmp_path: Path) -> Iterator[tuple[HttpEndpoint, MetadataState, ReplicaManager]]:
    ctl = Controller(ControllerConfig(), random.Random(7))
    state = MetadataState()
    for b in (1, 2, 3):
        apply_all(state, ctl.register_broker(state, RegisterBroker(b, f"i{b}", "h", b), 0))
        apply_all(state, ctl.heartbeat(state, b, state.brokers[b].broker_epoch, True, 0))
    apply_all(state, ctl.create_topic(state, "t", 3, 3, {}))
    config = NodeConfig(node_id=NODE, data_dir=tmp_path)
    manager = ReplicaManager(config)
    follower = MetadataFollower(SimCluster([1], random.Random(1)).member(1))
    follower.progress.state = state
    trio.run(PartitionReconciler(NODE, manager, follower).reconcile, state)
    view = MetadataView(NODE, follower, ClusterAuth("c", "s"))
    caught_up = trio.Event()
    caught_up.set()
    lifecycle: Any = SimpleNamespace(broker_epoch=3, fenced=False, caught_up=caught_up)
    probe = NodeProbe(config, manager, view, lifecycle, lambda: 7)
    try:
        yield HttpEndpoint(probe), state, manager
    finally:
        trio.run(manager.close_all)


def get(endpoint: HttpEndpoint, path: str) -> tuple[int, bytes]:
    response = endpoint.route(parse_head(f"GET {path} HTTP/1.1".encode()))
    return response.status, response.body


def scrape(endpoint: HttpEndpoint) -> dict[str, float]:
    """Each sample's value by "name{labels}" (labels sorted), as Prometheus parses them."""
    status, body = get(endpoint, "/metrics")
    assert status == 200
    out = {}
    for family in text_string_to_metric_families(body.decode()):
        for s in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            out[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
    return out


def test_partition_health_traffic_and_sizes_are_read_at_scrape_time(
    node: tuple[HttpEndpoint, MetadataState, ReplicaManager],
) -> None:
    endpoint, state, manager = node
    led = [r for r in manager.replicas() if r.is_leader]
    assert led, "node 1 leads some partition of t"
    m = scrape(endpoint)
    assert m["rillet_partitions"] == 3
    assert m["rillet_partitions_led"] == len(led)
    assert m["rillet_partitions_under_replicated"] == 0
    assert m["rillet_open_connections"] == 7
    assert m["rillet_node_ready"] == 1
    failures = endpoint.probe.sasl_failures
    assert isinstance(failures, dict)
    failures[("kafka", "PLAIN")] = 4  # the node's LoginGuard counts them (by mechanism only)
    assert (
        scrape(endpoint)[
            "rillet_sasl_authentication_failures_total{listener=kafka,mechanism=PLAIN}"
        ]
        == 4
    )
    replica = led[0]
    replica.append_as_leader(build_batch([(1, b"k", b"v" * 100, None)] * 5), 1)
    # The controller shrinks that partition's ISR to the leader alone.
    t = state.topic_by_name("t")
    assert t is not None
    number = replica.key.partition
    state.apply(state.last_applied_index + 1, PartitionChange(t.topic_id, number, None, [NODE]))
    reconciler = PartitionReconciler(NODE, manager, endpoint.probe.view.follower)
    trio.run(reconciler.reconcile, state)
    m = scrape(endpoint)
    assert m["rillet_partitions_under_replicated"] == 1
    assert m["rillet_partitions_at_min_isr"] == 1
    assert m["rillet_isr_shrinks_total"] == 1
    assert m["rillet_topic_records_in_total{topic=t}"] == 5
    assert m["rillet_topic_bytes_in_total{topic=t}"] > 500
    assert m[f"rillet_log_size_bytes{{partition={number},topic=t}}"] > 500
    assert m[f"rillet_log_segments{{partition={number},topic=t}}"] == 1


def test_cluster_wide_families_come_from_the_active_controller_only(
    node: tuple[HttpEndpoint, MetadataState, ReplicaManager],
) -> None:
    endpoint, _, _ = node
    m = scrape(endpoint)
    assert m["rillet_controller_active"] == 0
    assert "rillet_partitions_offline" not in m
    endpoint.probe.view.controller = SimpleNamespace(active=True)  # type: ignore[assignment]
    m = scrape(endpoint)
    assert m["rillet_partitions_offline"] == 0
    assert m["rillet_brokers{state=unfenced}"] == 3


def test_ready_names_the_reason_when_not_ready(
    node: tuple[HttpEndpoint, MetadataState, ReplicaManager],
) -> None:
    endpoint, state, _ = node
    assert get(endpoint, "/ready") == (200, b"ready\n")
    assert get(endpoint, "/health") == (200, b"ok\n")
    lifecycle: Any = endpoint.probe.lifecycle
    lifecycle.fenced = True
    assert get(endpoint, "/ready") == (503, b"fenced by the controller\n")
    lifecycle.fenced = False
    state.apply(state.last_applied_index + 1, FenceBroker(NODE, state.brokers[NODE].broker_epoch))
    assert get(endpoint, "/ready") == (503, b"fenced in the applied metadata\n")
    lifecycle.broker_epoch = None
    assert get(endpoint, "/ready") == (503, b"not registered with the controller yet\n")
    assert get(endpoint, "/nope")[0] == 404


def test_the_console_json_and_page(
    node: tuple[HttpEndpoint, MetadataState, ReplicaManager],
) -> None:
    endpoint, state, _ = node
    status, body = get(endpoint, "/api/cluster")
    doc = json.loads(body)
    assert status == 200
    assert [b["id"] for b in doc["brokers"]] == [1, 2, 3]
    assert [p["partition"] for p in doc["topics"][0]["partitions"]] == [0, 1, 2]
    assert all(p["high_watermark"] == 0 for p in doc["topics"][0]["partitions"])
    assert [b["applied_index"] for b in doc["brokers"]] == [state.last_applied_index, None, None]
    endpoint.probe.applied_by_broker[2] = 4
    doc = json.loads(get(endpoint, "/api/cluster")[1])
    assert [b["applied_index"] for b in doc["brokers"]][1] == 4
    status, page = get(endpoint, "/")
    assert status == 200 and b"/api/cluster" in page and b"http" not in page.split(b"<script>")[1]


def test_requests_are_timed_by_listener_and_api(
    node: tuple[HttpEndpoint, MetadataState, ReplicaManager],
) -> None:
    endpoint, _, _ = node
    endpoint.requests.observe("native", "produce", 0.002)
    endpoint.requests.error("kafka", "fetch")
    endpoint.requests.observe_fsync(0.001)
    m = scrape(endpoint)
    assert m["rillet_request_duration_seconds_count{api=produce,listener=native}"] == 1
    assert m["rillet_request_errors_total{api=fetch,listener=kafka}"] == 1
    assert m["rillet_log_fsync_duration_seconds_count"] == 1


def test_a_timed_reply_reports_once_when_done_and_nothing_when_closed() -> None:
    outcomes: list[bool] = []

    def done(api: str, started_s: float, failed: bool) -> None:
        assert api == "fetch" and started_s == 1.5
        outcomes.append(failed)

    async def ok() -> int:
        return 5

    async def fails() -> int:
        raise ValueError("x")

    async def main() -> None:
        assert await TimedReply(ok(), done, "fetch", 1.5) == 5
        with pytest.raises(ValueError):
            await TimedReply(fails(), done, "fetch", 1.5)

    trio.run(main)
    assert outcomes == [False, True]
    inner = ok()
    TimedReply(inner, done, "fetch", 1.5).close()
    assert inner.cr_frame is None  # closed with its wrapper: no "never awaited" warning
    assert outcomes == [False, True]


async def test_the_journal_keeps_recent_decisions_and_counts_kinds() -> None:
    journal = DecisionJournal(capacity=2)

    class Log:
        async def read_committed(self, after_index: int, max_entries: int = 1000) -> list[Entry]:
            records = [RegisterBroker(b, f"i{b}", "h", b) for b in (1, 2, 3)]
            return [Entry(i + 1, 1, encode_entry([r])) for i, r in enumerate(records)]

        def save_snapshot(self, snapshot: Any) -> None:
            raise AssertionError

        def latest_snapshot(self) -> None:
            return None

    entries = await JournalingLog(Log(), journal).read_committed(0)
    assert len(entries) == 3
    assert journal.counts["register_broker"] == 3
    assert [d.text for d in journal.recent] == ["broker 2 registered", "broker 3 registered"]


def test_elections_count_term_changes_after_the_first() -> None:
    raft = RaftActivity()
    for term in (1, 1, 2, 2, 5):
        raft.observe_term(term)
    assert raft.elections == 2


def test_console_decisions_name_topics_by_name(
    node: tuple[HttpEndpoint, MetadataState, ReplicaManager],
) -> None:
    endpoint, state, _ = node
    t = state.topic_by_name("t")
    assert t is not None
    endpoint.probe.journal.note(9, 2, [PartitionChange(t.topic_id, 0, 2, [2, 3])], 0)
    doc = json.loads(get(endpoint, "/api/cluster")[1])
    assert doc["decisions"][0]["text"] == "partition t-0: leader 2, isr [2, 3]"


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[http]\nport = 70000\n", "http.port must be 0..65535"),
        ("[http]\nport = -1\n", "http.port must be 0..65535"),
        ('[http]\nhost = ""\n', "http.host must not be empty"),
        ("[http]\nenabled = 1\n", "http.enabled must be true or false"),
        ("[http]\nenabled = true\nport = 9092\n", "http.port 9092 is also listener.port"),
        ("[http]\nbogus = 1\n", "unknown config key(s): http.bogus"),
    ],
)
def test_http_settings_are_checked_at_start_up(tmp_path: Path, toml: str, message: str) -> None:
    f = tmp_path / "node.toml"
    f.write_text(toml)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(f)
    assert load_config(None).http == HttpConfig(enabled=False, host="127.0.0.1", port=9620)


def test_with_a_token_the_route_refuses_the_api_and_serves_node_level_metrics(
    node: tuple[HttpEndpoint, MetadataState, ReplicaManager],
) -> None:
    token = "t" * 20
    endpoint = HttpEndpoint(node[0].probe, AccessPolicy(("10.0.0.5",), "", token))

    def ask(path: str, *headers: str) -> HttpResponse:
        head = "\r\n".join((f"GET {path} HTTP/1.1", *headers))
        return endpoint.route(parse_head(head.encode()))

    refused = ask("/api/cluster", "Host: 10.0.0.5:9620")
    assert refused.status == 401 and refused.body == b"a bearer token is required\n"
    assert dict(refused.headers)["WWW-Authenticate"].startswith("Basic ")
    assert ask("/api/cluster", f"Authorization: Bearer {token}").status == 200
    assert ask("/", "Host: rebound.example", f"Authorization: Bearer {token}").status == 421
    assert ask("/health", "Host: rebound.example").status == 200
    bare = ask("/metrics").body.decode()
    assert 'topic="t"' not in bare and "rillet_open_connections 7" in bare
    assert 'topic="t"' in ask("/metrics", f"Authorization: Bearer {token}").body.decode()


def test_the_log_cleaner_cleans_off_the_loop_and_reports_its_metrics(
    node: tuple[HttpEndpoint, MetadataState, ReplicaManager],
) -> None:
    endpoint, state, manager = node
    replica = next(r for r in manager.replicas() if r.is_leader)
    t = state.topic_by_name("t")
    assert t is not None  # the ISR is the leader alone: its log end is the high watermark
    change = PartitionChange(t.topic_id, replica.key.partition, None, [NODE])
    state.apply(state.last_applied_index + 1, change)
    trio.run(PartitionReconciler(NODE, manager, endpoint.probe.view.follower).reconcile, state)
    replica.log.reconfigure(dataclasses.replace(replica.config, cleanup_policy="compact"))
    for i in range(20):
        replica.append_as_leader(build_batch([(i, b"k", b"v" * 100, None)]), i)
    replica.log.roll(100)
    labels = f"{{partition={replica.key.partition},topic=t}}"
    assert scrape(endpoint)[f"rillet_log_cleaner_dirty_ratio{labels}"] == 1.0
    cleaner = LogCleaner(TasksConfig(), manager)
    assert trio.run(cleaner.clean_once) is True
    assert trio.run(cleaner.clean_once) is False  # nothing dirty is left
    m = scrape(endpoint)
    assert m[f"rillet_log_cleaner_dirty_ratio{labels}"] == 0.0
    assert m["rillet_log_cleaner_bytes_cleaned_total"] > 20 * 100
    assert m["rillet_log_cleaner_time_since_last_clean_ms"] >= 0
