"""Producer-side batching: records accumulate per partition into batches.

``append`` is the producer's per-record hot path: it encodes the record into the open batch
of its partition and returns a small handle, nothing more. A batch is ready to send when it
is full, when it is older than ``linger_ms``, or when the producer is flushing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator
from typing import Any

import trio

from rillet.client.types import RecordMetadata
from rillet.wire.batch import BatchBuilder
from rillet.wire.compression import Compression
from rillet.wire.record_codec import HeaderPairs

TP = tuple[str, int]


class ProducerBatch:
    """One batch on its way to the leader, and the completion shared by its records."""

    __slots__ = (
        "attempts",
        "base_offset",
        "builder",
        "callbacks",
        "count",
        "created_s",
        "deadline_s",
        "done",
        "encoded",
        "error",
        "partition",
        "retry_at_s",
        "size",
        "topic",
    )

    def __init__(
        self,
        topic: str,
        partition: int,
        compression: Compression,
        now_s: float,
        delivery_timeout_s: float,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.builder = BatchBuilder(compression)
        self.created_s = now_s
        self.deadline_s = now_s + delivery_timeout_s
        self.done = trio.Event()
        self.base_offset = -1
        self.error: BaseException | None = None
        self.attempts = 0
        self.retry_at_s = 0.0
        self.encoded: bytes | None = None
        self.size = 0
        self.count = 0
        self.callbacks: list[Callable[[ProducerBatch], None]] | None = None

    def encode(self) -> bytes:
        if self.encoded is None:
            self.encoded = self.builder.build()
        return self.encoded

    def complete(self, base_offset: int) -> None:
        self.base_offset = base_offset
        self._finish()

    def fail(self, error: BaseException) -> None:
        self.error = error
        self._finish()

    def _finish(self) -> None:
        self.done.set()
        if self.callbacks:
            for callback in self.callbacks:
                callback(self)

    def add_callback(self, callback: Callable[[ProducerBatch], None]) -> None:
        """Run ``callback(batch)`` on completion (immediately if already complete)."""
        if self.done.is_set():
            callback(self)
            return
        if self.callbacks is None:
            self.callbacks = []
        self.callbacks.append(callback)


class RecordFuture:
    """Awaitable result of one ``send``: RecordMetadata, or the error of its batch."""

    __slots__ = ("_batch", "_index", "_timestamp_ms")

    def __init__(self, batch: ProducerBatch, index: int, timestamp_ms: int) -> None:
        self._batch = batch
        self._index = index
        self._timestamp_ms = timestamp_ms

    def done(self) -> bool:
        return self._batch.done.is_set()

    def result(self) -> RecordMetadata:
        """The outcome of a completed send (raises its error)."""
        b = self._batch
        if not b.done.is_set():
            raise RuntimeError("the record is not acknowledged yet")
        if b.error is not None:
            raise b.error
        offset = b.base_offset + self._index if b.base_offset >= 0 else -1
        return RecordMetadata(b.topic, b.partition, offset, self._timestamp_ms)

    def add_done_callback(self, callback: Callable[[RecordFuture], None]) -> None:
        self._batch.add_callback(lambda _batch: callback(self))

    async def wait(self) -> RecordMetadata:
        if not self._batch.done.is_set():
            await self._batch.done.wait()
        return self.result()

    def __await__(self) -> Generator[Any, None, RecordMetadata]:
        return self.wait().__await__()


class RecordAccumulator:
    def __init__(
        self,
        batch_bytes: int,
        linger_s: float,
        compression: Compression,
        delivery_timeout_s: float,
    ) -> None:
        self.batch_bytes = batch_bytes
        self.linger_s = linger_s
        self.compression = compression
        self.delivery_timeout_s = delivery_timeout_s
        self.queues: dict[TP, deque[ProducerBatch]] = {}
        self.buffered_bytes = 0
        self.flushing = 0

    def append(
        self,
        tp: TP,
        timestamp_ms: int,
        key: bytes | None,
        value: bytes | None,
        headers: HeaderPairs | None,
    ) -> tuple[RecordFuture, bool, bool]:
        """Add a record; returns its future, whether its batch is now full, and whether the
        record opened a new batch (the sender must then learn the batch's linger deadline)."""
        queue = self.queues.get(tp)
        if queue is None:
            queue = self.queues[tp] = deque()
        batch = queue[-1] if queue else None
        opened = False
        if batch is None or batch.encoded is not None or batch.size >= self.batch_bytes:
            batch = ProducerBatch(
                tp[0], tp[1], self.compression, trio.current_time(), self.delivery_timeout_s
            )
            queue.append(batch)
            opened = True
        index = batch.count
        batch.count = index + 1
        added = batch.builder.append(timestamp_ms, key, value, headers)
        size = batch.size = batch.size + added
        self.buffered_bytes += added
        return RecordFuture(batch, index, timestamp_ms), size >= self.batch_bytes, opened

    def ready_partitions(self, now_s: float) -> tuple[list[TP], float | None]:
        """Partitions whose first batch may be sent now, and the next linger deadline."""
        ready = []
        next_deadline: float | None = None
        for tp, queue in self.queues.items():
            if not queue:
                continue
            batch = queue[0]
            if batch.retry_at_s > now_s:
                wake = batch.retry_at_s
            elif (
                self.flushing
                or batch.size >= self.batch_bytes
                or len(queue) > 1
                or batch.encoded is not None
                or now_s - batch.created_s >= self.linger_s
            ):
                ready.append(tp)
                continue
            else:
                wake = batch.created_s + self.linger_s
            if next_deadline is None or wake < next_deadline:
                next_deadline = wake
        return ready, next_deadline

    def pop(self, tp: TP) -> ProducerBatch:
        batch = self.queues[tp].popleft()
        batch.encode()
        return batch

    def requeue(self, batch: ProducerBatch, retry_at_s: float) -> None:
        """Put a batch back at the front of its partition for a retry."""
        batch.retry_at_s = retry_at_s
        batch.attempts += 1
        self.queues.setdefault((batch.topic, batch.partition), deque()).appendleft(batch)

    def release(self, batch: ProducerBatch) -> None:
        self.buffered_bytes -= batch.size

    def pending_batches(self) -> list[ProducerBatch]:
        return [b for q in self.queues.values() for b in q]
