"""The producer: batching, a background sender, retries, acks.

``send`` only encodes the record into its partition's open batch (see accumulator.py); it
awaits only when the topic's metadata is unknown or the buffer is full. The sender task
groups ready batches by leader into one Produce request per node, keeps up to
``max_in_flight`` requests in flight per node, retries retriable errors with backoff (after a
metadata refresh where the error says the leader moved) until ``delivery_timeout_ms``.
"""

from __future__ import annotations

import logging
import random
import time
from collections import defaultdict

import trio

from rillet.client.accumulator import TP, ProducerBatch, RecordAccumulator, RecordFuture
from rillet.client.cluster import ClusterClient
from rillet.client.errors import (
    BufferFullError,
    ClientTimeoutError,
    ConnectionFailedError,
    RilletError,
    error_for,
)
from rillet.client.lifecycle import ClientLifecycle
from rillet.client.partitioner import StickyPartitioner
from rillet.wire.compression import Compression
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import ProducePartitionData, ProduceRequest, ProduceResponse
from rillet.wire.record_codec import HeaderPairs

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 8 * 1024 * 1024


def parse_acks(acks: int | str) -> int:
    if acks in ("all", -1, "-1"):
        return -1
    if acks in (0, 1, "0", "1"):
        return int(acks)
    raise ValueError(f"acks must be 0, 1, -1 or 'all', not {acks!r}")


class Producer(ClientLifecycle):
    """Async producer; use as ``async with Producer(bootstrap) as producer``."""

    def __init__(
        self,
        bootstrap: str,
        *,
        acks: int | str = "all",
        linger_ms: int = 5,
        batch_bytes: int = 256 * 1024,
        buffer_bytes: int = 64 * 1024 * 1024,
        compression: str = "none",
        delivery_timeout_ms: int = 120_000,
        request_timeout_ms: int = 30_000,
        retry_backoff_ms: int = 100,
        max_in_flight: int = 5,
        max_block_ms: int = 60_000,
        client_id: str | None = None,
        partitioner: StickyPartitioner | None = None,
    ) -> None:
        self.acks = parse_acks(acks)
        if batch_bytes < 1 or linger_ms < 0 or max_in_flight < 1:
            raise ValueError("batch_bytes and max_in_flight must be >= 1, linger_ms >= 0")
        self._request_timeout_ms = request_timeout_ms
        self._retry_backoff_s = retry_backoff_ms / 1000
        self._max_in_flight = max_in_flight
        self._buffer_bytes = buffer_bytes
        self._max_block_s = max_block_ms / 1000
        self._delivery_timeout_s = delivery_timeout_ms / 1000
        super().__init__(ClusterClient(bootstrap, client_id, request_timeout_ms))
        self._acc = RecordAccumulator(
            batch_bytes,
            linger_ms / 1000,
            Compression.parse(compression),
            delivery_timeout_ms / 1000,
        )
        self._partitioner = partitioner or StickyPartitioner(random.Random())
        self._counts: dict[str, int] = {}
        self._wakeup = trio.Event()
        self._space = trio.Event()
        self._in_flight: dict[int, int] = defaultdict(int)
        self._in_flight_batches: set[ProducerBatch] = set()
        self._idle = trio.Event()
        self._closed = False

    # -- lifecycle ------------------------------------------------------------------------

    def _started(self, nursery: trio.Nursery) -> None:
        nursery.start_soon(self._sender)

    async def _closing(self, exc_type: type[BaseException] | None) -> None:
        try:
            if exc_type is None:
                await self.flush()
        finally:
            self._closed = True
            for batch in self._acc.pending_batches():
                if not batch.done.is_set():
                    batch.fail(RilletError("producer closed before the record was sent"))

    # -- sending --------------------------------------------------------------------------

    async def send(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        headers: HeaderPairs | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
    ) -> RecordFuture:
        """Queue one record; returns an awaitable of its RecordMetadata."""
        if self._closed:
            raise RilletError("producer is closed")
        count = self._counts.get(topic)
        if count is None:
            count = await self._cluster.wait_for_topic(topic, self._delivery_timeout_s)
            self._counts[topic] = count
        if partition is None:
            partition = self._partitioner.partition(topic, key, count)
        elif not 0 <= partition < count:
            raise error_for(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{topic} has no partition {partition}"
            )
        if self._acc.buffered_bytes >= self._buffer_bytes:
            await self._wait_for_space()
        ts = timestamp_ms if timestamp_ms is not None else time.time_ns() // 1_000_000
        future, full, opened = self._acc.append((topic, partition), ts, key, value, headers)
        if full:
            if key is None:
                self._partitioner.batch_full(topic, partition, count)
            self._wakeup.set()
        elif opened:
            self._wakeup.set()
        return future

    async def _wait_for_space(self) -> None:
        with trio.move_on_after(self._max_block_s):
            while self._acc.buffered_bytes >= self._buffer_bytes:
                self._space = trio.Event()
                self._wakeup.set()
                await self._space.wait()
            return
        raise BufferFullError(f"buffer of {self._buffer_bytes} bytes full for {self._max_block_s}s")

    async def flush(self) -> None:
        """Send everything queued and wait until every batch has completed."""
        self._acc.flushing += 1
        try:
            self._wakeup.set()
            for batch in self._acc.pending_batches() + list(self._in_flight_batches):
                await batch.done.wait()
            while self._acc.pending_batches() or self._in_flight_batches:
                self._idle = trio.Event()
                self._wakeup.set()
                await self._idle.wait()
        finally:
            self._acc.flushing -= 1

    # -- sender ---------------------------------------------------------------------------

    async def _sender(self) -> None:
        assert self._nursery is not None
        while True:
            now = trio.current_time()
            ready, next_deadline = self._acc.ready_partitions(now)
            by_leader: dict[int, list[TP]] = defaultdict(list)
            unknown: list[TP] = []
            for tp in ready:
                leader = self._cluster.leader_for(*tp)
                if leader is None:
                    unknown.append(tp)
                else:
                    by_leader[leader].append(tp)
            for tp in unknown:
                self._expire_or_wait(tp, now)
            if unknown:
                self._nursery.start_soon(self._refresh_metadata)
            for leader, tps in by_leader.items():
                while self._in_flight[leader] < self._max_in_flight:
                    batches = self._drain(tps)
                    if not batches:
                        break
                    self._in_flight[leader] += 1
                    self._nursery.start_soon(self._send_request, leader, batches)
            if not self._acc.pending_batches() and not self._in_flight_batches:
                self._idle.set()
            self._wakeup = trio.Event()
            timeout = 1.0 if next_deadline is None else max(next_deadline - now, 0)
            if unknown:
                timeout = min(timeout, self._retry_backoff_s)
            with trio.move_on_after(timeout):
                await self._wakeup.wait()

    def _drain(self, tps: list[TP]) -> list[ProducerBatch]:
        """At most one batch per partition, within the request size limit."""
        out: list[ProducerBatch] = []
        total = 0
        now = trio.current_time()
        for tp in tps:
            queue = self._acc.queues.get(tp)
            if not queue or queue[0].retry_at_s > now:
                continue
            size = queue[0].size
            if out and total + size > MAX_REQUEST_BYTES:
                break
            batch = self._acc.pop(tp)
            self._in_flight_batches.add(batch)
            out.append(batch)
            total += size
        return out

    def _expire_or_wait(self, tp: TP, now: float) -> None:
        queue = self._acc.queues.get(tp)
        while queue and queue[0].deadline_s <= now:
            batch = queue.popleft()
            self._finish(
                batch,
                error_for(ErrorCode.LEADER_NOT_AVAILABLE, f"no leader for {tp[0]}-{tp[1]} in time"),
            )

    async def _refresh_metadata(self) -> None:
        try:
            await self._cluster.refresh_metadata(list({t for t, _ in self._acc.queues}))
        except RilletError as exc:
            log.debug("metadata refresh failed: %s", exc)
        self._wakeup.set()

    async def _send_request(self, leader: int, batches: list[ProducerBatch]) -> None:
        request = ProduceRequest(
            self.acks,
            self._request_timeout_ms,
            [ProducePartitionData(b.topic, b.partition, b.encode()) for b in batches],
        )
        try:
            conn = await self._cluster.connection(leader)
            if self.acks == 0:
                await conn.send_only(request)
                for b in batches:
                    self._finish(b, None, -1)
                return
            response: ProduceResponse = await conn.request(
                request, self._request_timeout_ms / 1000 + 5
            )
        except (ConnectionFailedError, ClientTimeoutError) as exc:
            for b in batches:
                self._retry_or_fail(b, exc, refresh=True)
            return
        except RilletError as exc:
            for b in batches:
                self._finish(b, exc)
            return
        finally:
            self._in_flight[leader] -= 1
            self._wakeup.set()
        results = {(r.topic, r.partition): r for r in response.partitions}
        for b in batches:
            r = results.get((b.topic, b.partition))
            if r is None:
                self._finish(b, RilletError("response did not mention the partition"))
            elif r.error_code == ErrorCode.NONE:
                self._finish(b, None, r.base_offset)
            else:
                err = error_for(r.error_code, r.error_message)
                if err.retriable:
                    self._retry_or_fail(b, err, refresh=err.code.needs_metadata_refresh)
                else:
                    self._finish(b, err)

    def _retry_or_fail(self, batch: ProducerBatch, error: BaseException, refresh: bool) -> None:
        now = trio.current_time()
        self._in_flight_batches.discard(batch)
        if self._closed or now + self._retry_backoff_s >= batch.deadline_s:
            self._finish(batch, error)
            return
        backoff = min(self._retry_backoff_s * (2 ** min(batch.attempts, 6)), 1.0)
        log.debug("retrying batch for %s-%s: %s", batch.topic, batch.partition, error)
        self._acc.requeue(batch, now + backoff)
        if refresh and self._nursery is not None:
            self._nursery.start_soon(self._refresh_metadata)
        self._wakeup.set()

    def _finish(self, batch: ProducerBatch, error: BaseException | None, offset: int = -1) -> None:
        self._in_flight_batches.discard(batch)
        self._acc.release(batch)
        if error is None:
            batch.complete(offset)
        else:
            batch.fail(error)
        self._space.set()
