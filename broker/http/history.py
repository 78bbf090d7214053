"""The console's recent past: a bounded ring of samples of one node's counters (sans-I/O).

The console's tables show the present; its charts need the last hour. A sampler task
(:mod:`~rillet.broker.http.history_sampler`) hands :meth:`History.record` one
:class:`Sample` every ``http.history_sample_interval_ms``, built from what the node already
counts, so nothing is added to the data path. The ring holds ``http.history_samples`` of
them (the oldest gives way), so its memory is bounded whatever the uptime. Throughput is
derived here from consecutive cumulative counters; a counter that went back (its replica
moved off this node and came back) counts as no traffic for that interval.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

Point = tuple[int, float]  # (time in ms, value)


@dataclass(frozen=True, slots=True)
class TopicCounters:
    """Cumulative counters of one topic's replicas on this node."""

    bytes_in: int = 0
    records_in: int = 0
    bytes_out: int = 0


@dataclass(frozen=True, slots=True)
class Sample:
    topics: Mapping[str, TopicCounters] = field(default_factory=dict)
    lag_by_group: Mapping[str, int] = field(default_factory=dict)
    under_replicated: int = 0


class History:
    """The last ``capacity`` samples, each with the time it was taken."""

    def __init__(self, capacity: int) -> None:
        if capacity < 2:
            raise ValueError(f"a history needs room for 2 samples, not {capacity}")
        self._samples: deque[tuple[int, Sample]] = deque(maxlen=capacity)

    def __len__(self) -> int:
        return len(self._samples)

    def record(self, now_ms: int, sample: Sample) -> None:
        """Keep ``sample``; a time before the last one's (a clock step) restarts the ring."""
        if self._samples and now_ms < self._samples[-1][0]:
            self._samples.clear()
        self._samples.append((now_ms, sample))

    def rates(self, counter: Callable[[TopicCounters], int]) -> dict[str, list[Point]]:
        """Per topic, ``counter``'s increase per second between consecutive samples."""
        out: dict[str, list[Point]] = {}
        samples = list(self._samples)
        for (t0, s0), (t1, s1) in itertools.pairwise(samples):
            seconds = (t1 - t0) / 1000
            for topic, now in s1.topics.items():
                before = s0.topics.get(topic)
                delta = counter(now) - (counter(before) if before is not None else 0)
                rate = max(delta, 0) / seconds if seconds > 0 else 0.0
                out.setdefault(topic, []).append((t1, rate))
        return dict(sorted(out.items()))

    def lag(self) -> dict[str, list[Point]]:
        """Per group, its total lag at each sample that saw the group."""
        out: dict[str, list[Point]] = {}
        for t, sample in self._samples:
            for group, lag in sample.lag_by_group.items():
                out.setdefault(group, []).append((t, float(lag)))
        return dict(sorted(out.items()))

    def under_replicated(self) -> list[Point]:
        return [(t, float(s.under_replicated)) for t, s in self._samples]
