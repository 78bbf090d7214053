"""The trio task that feeds the console's history: one sample per interval, from counters.

A sample reads what the node already keeps: each hosted replica's traffic counters, the
groups' committed offsets against the hosted high watermarks (as ``/metrics`` does), and the
applied metadata's ISRs. It walks the partitions and offsets once per interval and does no
per-record work, so the data path does not pay for the charts. It remembers every topic's
counters of the last sample (one dict, not one per sample) to pick the busiest topics.
"""

from __future__ import annotations

from collections.abc import Mapping

import trio

from rillet.broker.http.group_lag import group_lags
from rillet.broker.http.history import History, Sample, TopicCounters, busiest, most_lagging
from rillet.broker.http.node_probe import NodeProbe


def take_sample(
    probe: NodeProbe, most: int, before: Mapping[str, TopicCounters]
) -> tuple[Sample, dict[str, TopicCounters]]:
    """The sample to keep (at most ``most`` topics and groups), and every topic's counters
    for the next call's ``before``."""
    topics: dict[str, TopicCounters] = {}
    for replica in probe.replicas.replicas():
        name = replica.key.topic
        seen = topics.get(name, TopicCounters())
        topics[name] = TopicCounters(
            seen.bytes_in + replica.bytes_in,
            seen.records_in + replica.records_in,
            seen.bytes_out + replica.bytes_out,
        )
    lag: dict[str, int] = {}
    for item in group_lags(probe):
        if item.lag is not None:
            lag[item.group_id] = lag.get(item.group_id, 0) + item.lag
    partitions = probe.view.state.partitions.values()
    under = sum(1 for p in partitions if len(p.isr) < len(p.replicas))
    return Sample(busiest(topics, before, most), most_lagging(lag, most), under), topics


async def run_sampler(probe: NodeProbe, history: History) -> None:
    """Sample now and then every ``http.history_sample_interval_ms``, until cancelled."""
    http = probe.config.http
    clock = probe.replicas.clock
    before: dict[str, TopicCounters] = {}
    while True:
        sample, before = take_sample(probe, http.history_max_series, before)
        history.record(clock.now_ms(), sample)
        await trio.sleep(http.history_sample_interval_ms / 1000)
