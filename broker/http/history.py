"""The console's recent past: a bounded ring of samples of one node's counters (sans-I/O).

The console's tables show the present; its charts need the last hour. A sampler task
(:mod:`~rillet.broker.http.history_sampler`) hands :meth:`History.record` one
:class:`Sample` every ``http.history_sample_interval_ms``, built from what the node already
counts, so nothing is added to the data path. The ring holds ``http.history_samples`` of
them (the oldest gives way), and each sample at most ``http.history_max_series`` topics
(the busiest since the last sample, :func:`busiest`) and as many groups (the most lagging),
so its memory is bounded whatever the uptime and however many topics there are; a chart with
more lines would not be read anyway. Throughput is derived here from consecutive cumulative
counters: a topic needs to be in both samples of an interval to get a point for it, and a
counter that went back (its replica moved off this node and came back) counts as no traffic.
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
                if before is None:
                    continue
                delta = counter(now) - counter(before)
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


def busiest(
    now: Mapping[str, TopicCounters], before: Mapping[str, TopicCounters], most: int
) -> dict[str, TopicCounters]:
    """The ``most`` topics with the most bytes in and out since ``before`` (a topic not in
    ``before`` counts from zero), ties by name."""

    def traffic(topic: str) -> int:
        c, b = now[topic], before.get(topic, TopicCounters())
        return max(c.bytes_in - b.bytes_in, 0) + max(c.bytes_out - b.bytes_out, 0)

    chosen = sorted(now, key=lambda t: (-traffic(t), t))[:most]
    return {t: now[t] for t in sorted(chosen)}


def most_lagging(lag_by_group: Mapping[str, int], most: int) -> dict[str, int]:
    chosen = sorted(lag_by_group, key=lambda g: (-lag_by_group[g], g))[:most]
    return {g: lag_by_group[g] for g in sorted(chosen)}
