"""Per-request metrics (count, errors, latency) by listener and api, and fsync latency.

Observing happens on the node's one event-loop thread, so the histograms are plain lists of
bucket counts updated without a lock (a bisect and two additions, well under a microsecond);
a collector turns them into Prometheus families when scraped, from the node's own
:class:`~prometheus_client.CollectorRegistry` (never the process-global default one).
Observations are per request or per fsync, never per record.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

# Requests range from sub-millisecond metadata reads to long-polling fetches.
REQUEST_BUCKETS_S = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
# A Raft entry is committed once a majority has it on disk: about a millisecond here.
RAFT_APPEND_BUCKETS_S = (
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
)  # fmt: skip
FSYNC_BUCKETS_S = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)


class LocalHistogram:
    """Bucket counts (the last one is +Inf), their sum and count; not thread-safe."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value

    def cumulative(self) -> list[tuple[str, float]]:
        out: list[tuple[str, float]] = []
        total = 0
        for bound, count in zip((*map(_le, self.bounds), "+Inf"), self.counts, strict=True):
            total += count
            out.append((bound, float(total)))
        return out


def _le(bound: float) -> str:
    return repr(float(bound))


class RequestMetrics(Collector):
    def __init__(self, registry: CollectorRegistry) -> None:
        self._latency: dict[tuple[str, str], LocalHistogram] = {}
        self._errors: dict[tuple[str, str], int] = {}
        self._fsync = LocalHistogram(FSYNC_BUCKETS_S)
        registry.register(self)

    def observe(self, listener: str, api: str, duration_s: float) -> None:
        key = (listener, api)
        histogram = self._latency.get(key)
        if histogram is None:
            histogram = self._latency[key] = LocalHistogram(REQUEST_BUCKETS_S)
        histogram.observe(duration_s)

    def error(self, listener: str, api: str) -> None:
        key = (listener, api)
        self._errors[key] = self._errors.get(key, 0) + 1

    def observe_fsync(self, duration_s: float) -> None:
        self._fsync.observe(duration_s)

    def collect(self) -> Iterator[Metric]:
        latency = HistogramMetricFamily(
            "rillet_request_duration_seconds",
            "Time from a request's arrival to its answer being ready, by listener and api",
            labels=("listener", "api"),
        )
        for (listener, api), h in sorted(self._latency.items()):
            latency.add_metric((listener, api), h.cumulative(), h.sum)
        yield latency
        errors = CounterMetricFamily(
            "rillet_request_errors",
            "Requests answered with a request-level error (unknown api, bad version, failure)",
            labels=("listener", "api"),
        )
        for (listener, api), count in sorted(self._errors.items()):
            errors.add_metric((listener, api), count)
        yield errors
        fsync = HistogramMetricFamily(
            "rillet_log_fsync_duration_seconds", "Duration of each partition log fsync"
        )
        fsync.add_metric((), self._fsync.cumulative(), self._fsync.sum)
        yield fsync
