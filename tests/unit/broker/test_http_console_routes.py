"""The console's server-drawn views through the endpoint's route, on real replicas and state."""

from __future__ import annotations

import re

import trio
from test_http_collectors import node  # noqa: F401 (the fixture)

from rillet.broker.http.access import AccessPolicy
from rillet.broker.http.endpoint import HttpEndpoint
from rillet.broker.http.history import TopicCounters
from rillet.broker.http.history_sampler import take_sample
from rillet.broker.http.request_parser import parse_head
from rillet.broker.http.server import HttpResponse
from rillet.broker.replica.partition_reconciler import PartitionReconciler
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.metadata_quorum.records import PartitionChange
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.batch import build_batch

Node = tuple[HttpEndpoint, MetadataState, ReplicaManager]


def ask(endpoint: HttpEndpoint, path: str, *headers: str) -> HttpResponse:
    """The route's answer, awaited when it is an awaitable (the message browser)."""
    head = "\r\n".join((f"GET {path} HTTP/1.1", *headers))
    answer = endpoint.route(parse_head(head.encode()))
    if isinstance(answer, HttpResponse):
        return answer

    async def wait() -> HttpResponse:
        return await answer

    return trio.run(wait)


def test_a_sample_counts_traffic_lag_and_under_replicated_partitions(node: Node) -> None:  # noqa: F811
    endpoint, state, manager = node
    led = next(r for r in manager.replicas() if r.is_leader)
    led.append_as_leader(build_batch([(1, b"k", b"v" * 10, None)] * 4), 1)
    t = state.topic_by_name("t")
    assert t is not None
    state.apply(state.last_applied_index + 1, PartitionChange(t.topic_id, 0, None, [1]))
    sample, counters = take_sample(endpoint.probe, 10, {})
    assert counters == sample.topics
    assert sample.topics["t"].records_in == 4 and sample.topics["t"].bytes_in > 40
    assert sample.under_replicated == 1
    assert sample.lag_by_group == {}


def test_charts_configs_and_log_dirs_are_drawn(node: Node) -> None:  # noqa: F811
    endpoint, _, manager = node
    led = next(r for r in manager.replicas() if r.is_leader)
    empty = ask(endpoint, "/console/charts")
    assert empty.status == 200 and empty.body.count(b"no samples yet") == 5
    before: dict[str, TopicCounters] = {}
    for i in range(3):
        led.append_as_leader(build_batch([(1, None, b"v", None)] * 2), 1)
        sample, before = take_sample(endpoint.probe, 10, before)
        endpoint.history.record(i * 10_000, sample)
    charts = ask(endpoint, "/console/charts").body.decode()
    assert re.search(r'data-series="t" data-points="2" points="[^"]+"', charts)
    assert 'data-series="cluster" data-points="3"' in charts
    configs = ask(endpoint, "/console/configs").body.decode()
    assert 'data-topic-configs="t"' in configs and 'data-config="retention.ms"' in configs
    logdirs = ask(endpoint, "/console/logdirs").body.decode()
    size = re.search(rf'data-size="t-{led.key.partition}">(\d+)<', logdirs)
    assert size is not None and int(size.group(1)) > 0
    assert ask(endpoint, "/console/nope").status == 404


def test_the_browser_route_reads_a_page_and_refuses_bad_queries(node: Node) -> None:  # noqa: F811
    endpoint, state, manager = node
    led = next(r for r in manager.replicas() if r.is_leader)
    t = state.topic_by_name("t")
    assert t is not None  # the leader alone in the ISR: its appends are committed at once
    change = PartitionChange(t.topic_id, led.key.partition, None, [1])
    state.apply(state.last_applied_index + 1, change)
    trio.run(PartitionReconciler(1, manager, endpoint.probe.view.follower).reconcile, state)
    led.append_as_leader(build_batch([(1, b"key-1", b'{"a": [1]}', None)]), 1)
    p = led.key.partition
    form = ask(endpoint, "/console/browse")
    assert form.status == 200 and b"<form" in form.body
    page = ask(endpoint, f"/console/browse?topic=t&partition={p}&format=json").body.decode()
    assert led.high_watermark == 1
    assert (
        "key-1" in page and "&quot;a&quot;: [" in page and '<span class="crc">valid</span>' in page
    )
    assert ask(endpoint, "/console/browse?topic=t&offset=x").status == 400
    assert ask(endpoint, "/console/browse?topic=nope").status == 404


def test_with_a_token_every_view_asks_for_it(node: Node) -> None:  # noqa: F811
    token = "s" * 20
    endpoint = HttpEndpoint(node[0].probe, AccessPolicy(("10.0.0.5",), "", token))
    for path in ("/console/browse?topic=t", "/console/charts", "/console/configs"):
        assert ask(endpoint, path, "Host: 10.0.0.5").status == 401
    bearer = f"Authorization: Bearer {token}"
    assert ask(endpoint, "/console/browse?topic=t", "Host: 10.0.0.5", bearer).status == 200
