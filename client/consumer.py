"""The consumer: manual assignment, positions, seeks, and prefetching fetches.

One fetcher task per node sends a single Fetch for all assigned partitions that node leads
and whose previous data the application has taken, so the next fetch is in flight while the
application processes the current records. ``poll`` returns buffered records at once, or
waits up to its timeout for the next response.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field

import trio

from rillet.client.cluster import ClusterClient
from rillet.client.errors import (
    OffsetOutOfRangeError,
    RilletError,
    error_for,
)
from rillet.client.fetch_decoder import decode_record_set
from rillet.client.lifecycle import ClientLifecycle
from rillet.client.types import ConsumerRecord, OffsetAndTimestamp, TopicPartition
from rillet.wire.api import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
)

log = logging.getLogger(__name__)

_RECHECK_S = 0.2
_RESET_POLICIES = {"earliest": EARLIEST_TIMESTAMP, "latest": LATEST_TIMESTAMP, "none": None}


@dataclass(slots=True)
class _PartitionState:
    position: int | None = None  # next offset to hand to the application
    fetch_offset: int | None = None  # next offset to fetch (ahead of position when buffered)
    reset_to: int | None = None  # pending seek to EARLIEST/LATEST timestamp
    buffered: list[ConsumerRecord] = field(default_factory=list)
    generation: int = 0  # bumped by every seek: stale responses are dropped
    in_flight: bool = False
    high_watermark: int = -1


class Consumer(ClientLifecycle):
    """Async consumer; use as ``async with Consumer(bootstrap) as consumer``."""

    def __init__(
        self,
        bootstrap: str,
        *,
        fetch_max_wait_ms: int = 500,
        fetch_min_bytes: int = 1,
        fetch_max_bytes: int = 50 * 1024 * 1024,
        max_partition_fetch_bytes: int = 1024 * 1024,
        auto_offset_reset: str = "earliest",
        check_crcs: bool = True,
        request_timeout_ms: int = 30_000,
        retry_backoff_ms: int = 100,
        client_id: str | None = None,
    ) -> None:
        if auto_offset_reset not in _RESET_POLICIES:
            raise ValueError("auto_offset_reset must be 'earliest', 'latest' or 'none'")
        self._reset_policy = _RESET_POLICIES[auto_offset_reset]
        self._max_wait_ms = fetch_max_wait_ms
        self._min_bytes = fetch_min_bytes
        self._max_bytes = fetch_max_bytes
        self._partition_max_bytes = max_partition_fetch_bytes
        self._check_crcs = check_crcs
        self._request_timeout_s = request_timeout_ms / 1000
        self._backoff_s = retry_backoff_ms / 1000
        super().__init__(ClusterClient(bootstrap, client_id, request_timeout_ms))
        self._states: dict[TopicPartition, _PartitionState] = {}
        self._data_ready = trio.Event()
        self._work: dict[int, trio.Event] = {}  # one wake-up per fetcher task
        self._fetchers: set[int] = set()
        self._error: BaseException | None = None

    # -- assignment and positions ---------------------------------------------------------

    def assign(self, partitions: list[TopicPartition]) -> None:
        wanted = {TopicPartition(*tp) for tp in partitions}
        for tp in list(self._states):
            if tp not in wanted:
                del self._states[tp]
        for tp in wanted:
            self._states.setdefault(tp, _PartitionState())
        self._kick()

    def assignment(self) -> set[TopicPartition]:
        return set(self._states)

    def _kick(self) -> None:
        """Wake every fetcher: partitions may have become fetchable."""
        for event in self._work.values():
            event.set()

    def _state(self, tp: TopicPartition) -> _PartitionState:
        state = self._states.get(TopicPartition(*tp))
        if state is None:
            raise RilletError(f"{tp} is not assigned to this consumer")
        return state

    def seek(self, tp: TopicPartition, offset: int) -> None:
        state = self._state(tp)
        state.position = state.fetch_offset = offset
        state.reset_to = None
        state.buffered = []
        state.generation += 1
        self._kick()

    async def seek_to_beginning(self, *tps: TopicPartition) -> None:
        self._seek_to(tps, EARLIEST_TIMESTAMP)

    async def seek_to_end(self, *tps: TopicPartition) -> None:
        self._seek_to(tps, LATEST_TIMESTAMP)

    def _seek_to(self, tps: tuple[TopicPartition, ...], timestamp: int) -> None:
        for tp in tps or tuple(self._states):
            state = self._state(tp)
            state.position = state.fetch_offset = None
            state.reset_to = timestamp
            state.buffered = []
            state.generation += 1
        self._kick()

    async def position(self, tp: TopicPartition) -> int:
        state = self._state(tp)
        if state.position is None:
            await self._resolve_positions()
        assert state.position is not None
        return state.position

    # -- offsets lookups ------------------------------------------------------------------

    async def _list_offsets(
        self, query: dict[TopicPartition, int]
    ) -> dict[TopicPartition, tuple[int, int]]:
        by_leader: dict[int, list[ListOffsetsPartition]] = defaultdict(list)
        for tp, ts in query.items():
            leader = await self._leader(tp)
            by_leader[leader].append(ListOffsetsPartition(tp.topic, tp.partition, ts))
        out: dict[TopicPartition, tuple[int, int]] = {}
        for leader, parts in by_leader.items():
            conn = await self._cluster.connection(leader)
            resp: ListOffsetsResponse = await conn.request(
                ListOffsetsRequest(parts), self._request_timeout_s
            )
            for r in resp.partitions:
                if r.error_code != ErrorCode.NONE:
                    raise error_for(r.error_code, f"{r.topic}-{r.partition}")
                out[TopicPartition(r.topic, r.partition)] = (r.offset, r.timestamp_ms)
        return out

    async def beginning_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        found = await self._list_offsets({TopicPartition(*tp): EARLIEST_TIMESTAMP for tp in tps})
        return {tp: o for tp, (o, _) in found.items()}

    async def end_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        """The high watermark of each partition: the offset after the last committed record."""
        found = await self._list_offsets({TopicPartition(*tp): LATEST_TIMESTAMP for tp in tps})
        return {tp: o for tp, (o, _) in found.items()}

    async def offsets_for_times(
        self, query: dict[TopicPartition, int]
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        for ts in query.values():
            if ts < 0:
                raise ValueError("timestamps must be >= 0")
        found = await self._list_offsets({TopicPartition(*tp): ts for tp, ts in query.items()})
        return {tp: (OffsetAndTimestamp(o, t) if o >= 0 else None) for tp, (o, t) in found.items()}

    async def _leader(self, tp: TopicPartition) -> int:
        leader = self._cluster.leader_for(tp.topic, tp.partition)
        if leader is None:
            await self._cluster.refresh_metadata([tp.topic])
            leader = self._cluster.leader_for(tp.topic, tp.partition)
            if leader is None:
                raise error_for(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{tp} has no leader")
        return leader

    async def _resolve_positions(self) -> None:
        need: dict[TopicPartition, int] = {}
        for tp, state in self._states.items():
            if state.position is None:
                target = state.reset_to if state.reset_to is not None else self._reset_policy
                if target is None:
                    raise OffsetOutOfRangeError(f"{tp} has no position and auto_offset_reset=none")
                need[tp] = target
        if not need:
            return
        found = await self._list_offsets(need)
        for tp, (offset, _) in found.items():
            current = self._states.get(tp)
            if current is not None and current.position is None:
                current.position = current.fetch_offset = offset
                current.reset_to = None
                current.generation += 1

    # -- polling --------------------------------------------------------------------------

    async def poll(
        self, timeout_ms: int = 1000, max_records: int | None = None
    ) -> list[ConsumerRecord]:
        """Records ready for the application; empty after ``timeout_ms`` with none."""
        self._raise_pending_error()
        await self._resolve_positions()
        await self._ensure_fetchers()
        records = self._take(max_records)
        if records:
            return records
        deadline = trio.current_time() + timeout_ms / 1000
        while trio.current_time() < deadline:
            self._data_ready = trio.Event()
            # Wake up now and then even without data: leaders may have become known.
            with trio.move_on_at(min(deadline, trio.current_time() + _RECHECK_S)):
                await self._data_ready.wait()
            self._raise_pending_error()
            records = self._take(max_records)
            if records:
                return records
            await self._resolve_positions()
            await self._ensure_fetchers()
        return []

    def _raise_pending_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _take(self, max_records: int | None) -> list[ConsumerRecord]:
        out: list[ConsumerRecord] = []
        limit = max_records if max_records is not None else 1 << 62
        for state in self._states.values():
            if not state.buffered or len(out) >= limit:
                continue
            room = limit - len(out)
            chunk = state.buffered[:room]
            state.buffered = state.buffered[room:]
            out.extend(chunk)
            state.position = chunk[-1].offset + 1
        if out:
            self._kick()
        return out

    async def _ensure_fetchers(self) -> None:
        """Start a fetcher for every leader of an assigned partition, learning leaders first."""
        assert self._nursery is not None
        unknown = {tp.topic for tp in self._states if self._cluster.leader_for(*tp) is None}
        if unknown:
            try:
                await self._cluster.refresh_metadata(sorted(unknown))
            except RilletError as exc:
                log.debug("metadata refresh failed: %s", exc)
        self._start_missing_fetchers()
        self._kick()

    def _fetchable(self, leader: int) -> list[tuple[TopicPartition, _PartitionState]]:
        return [
            (tp, s)
            for tp, s in self._states.items()
            if s.fetch_offset is not None
            and not s.buffered
            and not s.in_flight
            and self._cluster.leader_for(tp.topic, tp.partition) == leader
        ]

    async def _fetch_loop(self, leader: int) -> None:
        try:
            while True:
                parts = self._fetchable(leader)
                if not parts:
                    event = self._work[leader] = trio.Event()
                    await event.wait()
                    continue
                try:
                    await self._fetch_once(leader, parts)
                except RilletError as exc:
                    log.debug("fetch from node %d failed: %s", leader, exc)
                    for _, s in parts:
                        s.in_flight = False
                    await trio.sleep(self._backoff_s)
                    try:
                        await self._cluster.refresh_metadata(list({tp.topic for tp, _ in parts}))
                    except RilletError:
                        pass
                    self._start_missing_fetchers()
        finally:
            self._fetchers.discard(leader)
            self._work.pop(leader, None)

    def _start_missing_fetchers(self) -> None:
        """One fetcher per node leading an assigned partition (leaders move, nodes appear)."""
        if self._nursery is not None:
            for tp in self._states:
                leader = self._cluster.leader_for(tp.topic, tp.partition)
                if leader is not None and leader not in self._fetchers:
                    self._fetchers.add(leader)
                    self._nursery.start_soon(self._fetch_loop, leader)

    async def _fetch_once(
        self, leader: int, parts: list[tuple[TopicPartition, _PartitionState]]
    ) -> None:
        generations = {tp: s.generation for tp, s in parts}
        request = FetchRequest(
            self._max_wait_ms,
            self._min_bytes,
            self._max_bytes,
            [
                FetchPartition(
                    tp.topic, tp.partition, s.fetch_offset or 0, self._partition_max_bytes
                )
                for tp, s in parts
            ],
        )
        for _, s in parts:
            s.in_flight = True
        try:
            conn = await self._cluster.connection(leader)
            response: FetchResponse = await conn.request(
                request, self._request_timeout_s + self._max_wait_ms / 1000
            )
        finally:
            for _, s in parts:
                s.in_flight = False
        got_data = False
        refresh = False
        for r in response.partitions:
            tp = TopicPartition(r.topic, r.partition)
            state = self._states.get(tp)
            if state is None or state.generation != generations.get(tp):
                continue  # unassigned or seeked while the fetch was in flight
            state.high_watermark = r.high_watermark
            if r.error_code == ErrorCode.OFFSET_OUT_OF_RANGE:
                if self._reset_policy is None:
                    self._error = OffsetOutOfRangeError(
                        f"{tp} offset {state.fetch_offset} is out of range "
                        f"[{r.log_start_offset}, {r.log_end_offset}] and auto_offset_reset=none"
                    )
                    got_data = True
                else:
                    state.position = state.fetch_offset = None
                    state.reset_to = self._reset_policy
                    state.generation += 1
                    got_data = True  # wake poll so it resolves the new position
                continue
            if r.error_code != ErrorCode.NONE:
                err = error_for(r.error_code, f"{tp}")
                if not err.retriable:
                    self._error = err
                    got_data = True
                refresh = refresh or err.code.needs_metadata_refresh
                continue
            data = r.records
            if not isinstance(data, memoryview) or not data.nbytes:
                continue
            assert state.fetch_offset is not None
            try:
                records, next_offset = decode_record_set(
                    data, tp.topic, tp.partition, state.fetch_offset, self._check_crcs
                )
            except RilletError as exc:
                self._error = exc
                got_data = True
                continue
            state.fetch_offset = next_offset
            if records:
                state.buffered = records
                got_data = True
        if refresh:
            await self._cluster.refresh_metadata(list({tp.topic for tp, _ in parts}))
            self._start_missing_fetchers()
        if got_data:
            self._data_ready.set()
