"""``/metrics`` for a scraper without the endpoint's token: node-level series only.

Series labelled with a topic or a group name would list what ACLs hide on the client
listeners, so they are left out; everything else (Raft, connections, request latencies by
API, event-loop lag) still serves monitoring that needs no names.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

NAMING_LABELS = frozenset({"topic", "group"})


class NodeLevelOnly(Collector):
    """The families of ``registry`` without their samples labelled by topic or group."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterator[Metric]:
        for family in self._registry.collect():
            kept = [s for s in family.samples if not NAMING_LABELS & s.labels.keys()]
            if family.samples and not kept:
                continue  # a family of named series only: leave out its header too
            family.samples = kept
            yield family


def node_level_registry(registry: CollectorRegistry) -> CollectorRegistry:
    restricted = CollectorRegistry()
    restricted.register(NodeLevelOnly(registry))
    return restricted
