"""Per-request metrics (count, errors, latency) by listener and api, and fsync latency.

Histograms live in the node's own :class:`~prometheus_client.CollectorRegistry` (never the
process-global default one). Observing costs one dictionary lookup and a histogram update per
request or per fsync, never per record; the labelled children are cached so a request does
not re-resolve its labels.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

# Requests range from sub-millisecond metadata reads to long-polling fetches.
REQUEST_BUCKETS_S = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
FSYNC_BUCKETS_S = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)


class RequestMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self._latency = Histogram(
            "rillet_request_duration_seconds",
            "Time from a request's arrival to its answer being ready, by listener and api",
            ("listener", "api"),
            registry=registry,
            buckets=REQUEST_BUCKETS_S,
        )
        self._errors = Counter(
            "rillet_request_errors",
            "Requests answered with a request-level error (unknown api, bad version, failure)",
            ("listener", "api"),
            registry=registry,
        )
        self._fsync = Histogram(
            "rillet_log_fsync_duration_seconds",
            "Duration of each partition log fsync",
            registry=registry,
            buckets=FSYNC_BUCKETS_S,
        )
        self._children: dict[tuple[str, str], Histogram] = {}
        self._error_children: dict[tuple[str, str], Counter] = {}

    def observe(self, listener: str, api: str, duration_s: float) -> None:
        key = (listener, api)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = self._latency.labels(listener, api)
        child.observe(duration_s)

    def error(self, listener: str, api: str) -> None:
        key = (listener, api)
        child = self._error_children.get(key)
        if child is None:
            child = self._error_children[key] = self._errors.labels(listener, api)
        child.inc()

    def observe_fsync(self, duration_s: float) -> None:
        self._fsync.observe(duration_s)
