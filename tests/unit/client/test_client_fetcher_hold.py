"""The fetcher holds back a fetch of only caught-up partitions while others still drain.

Such a fetch long-polls on the node for fetch_max_wait_ms, and the node's one fetch in flight
would keep the partitions the application is draining from being fetched again meanwhile.
"""

from __future__ import annotations

from typing import cast

from rillet.client.buffered_records import BufferedRecords, RecordColumns
from rillet.client.cluster import ClusterClient
from rillet.client.fetcher import FetchConfig, Fetcher, caught_up, hold_idle_fetch
from rillet.client.subscription import PartitionState, Subscription
from rillet.client.types import TopicPartition

T = "t"


class _OneLeader:
    def leader_for(self, tp: TopicPartition) -> int:
        return 1


def _state(fetch_offset: int, high_watermark: int, buffered: int = 0) -> PartitionState:
    s = PartitionState()
    s.position = s.fetch_offset = fetch_offset
    s.high_watermark = high_watermark
    if buffered:
        values = [b"v"] * buffered
        columns = RecordColumns(fetch_offset - buffered, [0] * buffered, values, values, None)
        s.pending = BufferedRecords(T, 0, [columns])
    return s


def _fetcher(states: dict[int, PartitionState]) -> Fetcher:
    sub = Subscription()
    sub.states = {TopicPartition(T, p): s for p, s in states.items()}
    config = FetchConfig(
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=1 << 20,
        partition_max_bytes=1 << 20,
        check_crcs=True,
        request_timeout_s=30.0,
        backoff_s=0.1,
        reset_policy=None,
    )
    return Fetcher(cast(ClusterClient, _OneLeader()), sub, config, lambda: None, lambda: None)


def _fetched(fetcher: Fetcher) -> list[int]:
    parts, _ = fetcher._fetchable(1, now=0.0)
    return sorted(tp.partition for tp, _ in parts)


def test_caught_up_means_the_last_response_had_nothing_past_the_fetch_offset() -> None:
    assert caught_up(_state(10, 10))
    assert not caught_up(_state(5, 10))
    assert not caught_up(_state(0, -1))  # never fetched: nothing known


def test_hold_only_when_every_fetchable_partition_is_caught_up_and_some_drain() -> None:
    idle, behind = _state(10, 10), _state(5, 10)
    assert hold_idle_fetch([idle], draining=True)
    assert not hold_idle_fetch([idle], draining=False)
    assert not hold_idle_fetch([idle, behind], draining=True)
    assert not hold_idle_fetch([], draining=True)


def test_caught_up_partitions_wait_for_the_draining_ones() -> None:
    fetcher = _fetcher({0: _state(10, 10), 1: _state(10, 30, buffered=20)})
    assert _fetched(fetcher) == []


def test_they_go_together_once_drained() -> None:
    draining = _state(10, 30, buffered=20)
    fetcher = _fetcher({0: _state(10, 10), 1: draining})
    draining.pending.take(20)  # poll took them all
    draining.fetch_offset = 30
    assert _fetched(fetcher) == [0, 1]


def test_a_partition_with_data_is_fetched_at_once_with_the_caught_up_ones() -> None:
    fetcher = _fetcher({0: _state(10, 10), 1: _state(5, 30), 2: _state(0, 30, buffered=5)})
    assert _fetched(fetcher) == [0, 1]


def test_paused_buffers_do_not_hold_the_others_back() -> None:
    paused = _state(10, 30, buffered=20)
    paused.paused = True
    fetcher = _fetcher({0: _state(10, 10), 1: paused})
    assert _fetched(fetcher) == [0]
