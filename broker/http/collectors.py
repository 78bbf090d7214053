"""Prometheus collectors that read a node's state at scrape time.

Nothing here runs on the data path: each scrape walks the partitions this node hosts and the
applied metadata once. Per-partition gauges are reported by the partition's leader only
(under-replicated, at-min-ISR), cluster-wide ones (offline partitions, brokers, group lag)
by the active controller only, so summing a family over all nodes never double counts.
Counters kept on partition replicas (bytes and records in, bytes out, ISR changes) restart
when a replica moves off this node; Prometheus' ``rate`` treats that as a counter reset.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from rillet.broker.handlers.fetch_sessions import FetchSessionCache
from rillet.broker.http.group_lag import group_lags
from rillet.broker.http.node_probe import NodeProbe
from rillet.metadata_quorum.records import NO_LEADER
from rillet.partition_store.cleaning_pass import lag_of


class PartitionCollector(Collector):
    """Partition health, traffic, waiters and log sizes of the replicas on this node."""

    def __init__(self, probe: NodeProbe) -> None:
        self._probe = probe

    def collect(self) -> Iterator[Metric]:
        under = at_min = under_min = leaders = 0
        shrinks = expands = acks_waiters = fetch_waiters = 0
        traffic: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        size = GaugeMetricFamily(
            "rillet_log_size_bytes",
            "Bytes in a partition's log segments",
            labels=("topic", "partition"),
        )
        segments = GaugeMetricFamily(
            "rillet_log_segments", "Segments in a partition's log", labels=("topic", "partition")
        )
        hw = GaugeMetricFamily(
            "rillet_partition_high_watermark",
            "A partition's high watermark on this replica",
            labels=("topic", "partition"),
        )
        end = GaugeMetricFamily(
            "rillet_partition_log_end_offset",
            "A partition's log end offset on this replica",
            labels=("topic", "partition"),
        )
        dirty = GaugeMetricFamily(
            "rillet_log_cleaner_dirty_ratio",
            "Share of a compacted log's cleanable bytes not yet cleaned",
            labels=("topic", "partition"),
        )
        cleaned_bytes, last_clean_ms = 0, -1
        now_ms = self._probe.replicas.clock.now_ms()
        replicas = self._probe.replicas.replicas()
        for replica in replicas:
            topic, partition = replica.key.topic, str(replica.key.partition)
            size.add_metric((topic, partition), replica.log.size_bytes)
            segments.add_metric((topic, partition), len(replica.log.segments()))
            hw.add_metric((topic, partition), replica.high_watermark)
            end.add_metric((topic, partition), replica.log.log_end_offset)
            if replica.config.compacted and not replica.deleted:
                lag = lag_of(replica.log, now_ms, replica.high_watermark)
                dirty.add_metric((topic, partition), lag.dirty_ratio)
                cleaned_bytes += replica.cleaner_bytes_read
                last_clean_ms = max(last_clean_ms, replica.cleaner_last_clean_ms)
            counts = traffic[topic]
            counts[0] += replica.bytes_in
            counts[1] += replica.records_in
            counts[2] += replica.bytes_out
            shrinks += replica.isr_shrinks
            expands += replica.isr_expands
            acks_waiters += replica.acks_waiter_count
            fetch_waiters += replica.fetch_waiter_count
            leader = replica.leader
            if leader is None or replica.deleted:
                continue
            leaders += 1
            isr_size = len(leader.isr)
            under += isr_size < len(leader.replicas)
            at_min += isr_size == replica.min_insync_replicas
            under_min += isr_size < replica.min_insync_replicas
        yield _gauge("rillet_partitions", "Partition replicas hosted on this node", len(replicas))
        yield _gauge("rillet_partitions_led", "Partitions this node leads", leaders)
        yield _gauge(
            "rillet_partitions_under_replicated",
            "Partitions led here whose ISR is smaller than their replica set",
            under,
        )
        yield _gauge(
            "rillet_partitions_at_min_isr",
            "Partitions led here whose ISR size equals min.insync.replicas",
            at_min,
        )
        yield _gauge(
            "rillet_partitions_under_min_isr",
            "Partitions led here whose ISR is below min.insync.replicas (acks=all fails)",
            under_min,
        )
        yield _counter(
            "rillet_isr_shrinks", "ISR shrinks committed for partitions led here", shrinks
        )
        yield _counter(
            "rillet_isr_expands", "ISR expansions committed for partitions led here", expands
        )
        yield _gauge(
            "rillet_acks_all_waiters", "acks=all produce requests waiting for the ISR", acks_waiters
        )
        yield _gauge(
            "rillet_fetch_waiters", "Long-polling fetches parked on partitions", fetch_waiters
        )
        bytes_in = CounterMetricFamily(
            "rillet_topic_bytes_in", "Bytes appended as leader, by topic", labels=("topic",)
        )
        records_in = CounterMetricFamily(
            "rillet_topic_records_in", "Records appended as leader, by topic", labels=("topic",)
        )
        bytes_out = CounterMetricFamily(
            "rillet_topic_bytes_out", "Bytes read for consumers, by topic", labels=("topic",)
        )
        for topic, (b_in, r_in, b_out) in sorted(traffic.items()):
            bytes_in.add_metric((topic,), b_in)
            records_in.add_metric((topic,), r_in)
            bytes_out.add_metric((topic,), b_out)
        yield from (bytes_in, records_in, bytes_out, size, segments, hw, end, dirty)
        yield _counter(
            "rillet_log_cleaner_bytes_cleaned",
            "Bytes of log the cleaner read and rewrote on this node",
            cleaned_bytes,
        )
        yield _gauge(
            "rillet_log_cleaner_time_since_last_clean_ms",
            "Milliseconds since this node's cleaner last cleaned a log (-1: never)",
            now_ms - last_clean_ms if last_clean_ms >= 0 else -1,
        )


class NodeCollector(Collector):
    """Broker state, the Raft quorum, the controller, connections and event-loop lag."""

    def __init__(self, probe: NodeProbe) -> None:
        self._probe = probe

    def collect(self) -> Iterator[Metric]:
        probe = self._probe
        view = probe.view
        state = view.state
        yield _gauge(
            "rillet_node_ready", "1 when /ready answers 200", probe.not_ready_reason() is None
        )
        yield _gauge(
            "rillet_broker_fenced",
            "1 while the controller fences this broker",
            probe.lifecycle.fenced,
        )
        yield _gauge(
            "rillet_metadata_applied_index",
            "Metadata log index applied here",
            state.last_applied_index,
        )
        yield _gauge(
            "rillet_open_connections",
            "Open client and broker connections",
            probe.open_connections(),
        )
        yield _gauge(
            "rillet_event_loop_lag_seconds",
            "Latest event-loop lag probe",
            probe.loop_lag.last_ms / 1000,
        )
        yield _gauge(
            "rillet_event_loop_lag_max_seconds",
            "Worst event-loop lag since start",
            probe.loop_lag.max_ms / 1000,
        )
        yield _gauge(
            "rillet_event_loop_own_lag_max_seconds",
            "Worst event-loop lag since start less the time its thread waited for a core",
            probe.loop_lag.own_max_ms / 1000,
        )
        quorum = view.quorum
        if quorum is not None:
            lead = quorum.leadership()
            probe.raft.observe_term(lead.term)
            role = GaugeMetricFamily(
                "rillet_raft_role", "1 for this voter's current role", labels=("role",)
            )
            is_leader = lead.leader_id == probe.node_id
            role.add_metric(("leader",), is_leader)
            role.add_metric(("follower",), not is_leader)
            yield role
            yield _gauge("rillet_raft_term", "Current Raft term", lead.term)
            yield _gauge(
                "rillet_raft_leader_id",
                "The Raft leader this voter knows (-1: none)",
                -1 if lead.leader_id is None else lead.leader_id,
            )
            yield _gauge("rillet_raft_commit_index", "Raft commit index", quorum.commit_index())
            yield _counter(
                "rillet_raft_elections",
                "Term changes this voter has observed",
                probe.raft.elections,
            )
            append = probe.raft_append
            latency = HistogramMetricFamily(
                "rillet_raft_append_latency_seconds",
                "From proposing a metadata entry to its commit, on this node as controller",
            )
            latency.add_metric([], append.cumulative(), append.sum)
            yield latency
        failures = CounterMetricFamily(
            "rillet_sasl_authentication_failures",
            "Failed SASL logins by listener and mechanism",
            labels=("listener", "mechanism"),
        )
        for (listener, mechanism), count in sorted(probe.sasl_failures.items()):
            failures.add_metric((listener, mechanism), count)
        yield failures
        if probe.fetch_sessions is not None:
            yield from _fetch_session_metrics(probe.fetch_sessions)
        active = view.controller_is_local()
        yield _gauge("rillet_controller_active", "1 on the active controller", active)
        decisions = CounterMetricFamily(
            "rillet_metadata_records",
            "Metadata records applied here, by kind (controller decisions incl. fencing)",
            labels=("kind",),
        )
        for kind, count in sorted(probe.journal.counts.items()):
            decisions.add_metric((kind,), count)
        yield decisions
        if not active:
            return
        brokers = GaugeMetricFamily(
            "rillet_brokers", "Registered brokers by state", labels=("state",)
        )
        fenced = sum(1 for b in state.brokers.values() if b.fenced)
        brokers.add_metric(("fenced",), fenced)
        brokers.add_metric(("unfenced",), len(state.brokers) - fenced)
        yield brokers
        offline = sum(1 for p in state.partitions.values() if p.leader == NO_LEADER)
        yield _gauge(
            "rillet_partitions_offline", "Partitions without a leader (controller)", offline
        )
        yield _gauge("rillet_topics", "Topics (controller)", len(state.topics))
        lag = GaugeMetricFamily(
            "rillet_consumer_group_lag",
            "High watermark minus committed offset (controller; hosted partitions)",
            labels=("group", "topic", "partition"),
        )
        for item in group_lags(probe):
            if item.lag is not None:
                lag.add_metric((item.group_id, item.topic, str(item.partition)), item.lag)
        yield lag


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=float(value))


def _counter(name: str, documentation: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(name, documentation, value=float(value))


def _fetch_session_metrics(cache: FetchSessionCache) -> Iterator[Metric]:
    """Kafka's FetchSessionCache metrics, and how much incremental fetches saved."""
    stats = cache.stats
    yield _gauge("rillet_kafka_fetch_sessions", "Kafka clients' fetch sessions cached", len(cache))
    yield _gauge(
        "rillet_kafka_fetch_session_partitions",
        "Partitions held by the cached fetch sessions",
        cache.cached_partitions(),
    )
    kinds = CounterMetricFamily(
        "rillet_kafka_fetches", "Kafka clients' fetches by session kind", labels=("kind",)
    )
    kinds.add_metric(("full",), stats.full_fetches)
    kinds.add_metric(("incremental",), stats.incremental_fetches)
    kinds.add_metric(("refused",), stats.refusals)
    yield kinds
    yield _counter(
        "rillet_kafka_incremental_fetch_partitions_named",
        "Partitions named by incremental fetches",
        stats.partitions_asked,
    )
    yield _counter(
        "rillet_kafka_incremental_fetch_partitions_answered",
        "Partitions in the answers to incremental fetches",
        stats.partitions_answered,
    )
    yield _counter(
        "rillet_kafka_fetch_session_evictions",
        "Fetch sessions evicted to make room for another",
        stats.evictions,
    )
