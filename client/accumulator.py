"""Producer-side batching: records accumulate per partition into batches.

``append`` is the producer's per-record hot path. It encodes the record into the open batch of
its partition (wire.batch.BatchBuilder does the encoding) and returns a small handle; it
allocates no event, no future and no task per record. All records of a batch share the
batch's single completion event, and a record's handle is just (batch, index).

A partition's unsent batches wait in a queue, oldest first; the newest may still be open for
appends. A batch is closed when the next record would not fit in ``batch_bytes``, and it is
ready to send once closed, once older than ``linger_ms``, while the producer flushes, or at
once while the producer has no batch in flight (also when the batch was opened while the
producer was idle, for the partitions after the first of a burst): send at once when idle,
batch while busy. A record that finds the producer idle pays no linger (the idea of Nagle's
algorithm); while batches are on their way new ones fill up, and go when the last answer is
in or at ``linger_ms``. A keyless producer over many partitions nearly always has some batch
in flight under load, so its batches stay as large as ``linger_ms`` makes them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any

import trio

from rillet.client.errors import BufferFullError
from rillet.client.types import RecordMetadata
from rillet.wire.batch import HEADER_SIZE, BatchBuilder
from rillet.wire.compression import Compression
from rillet.wire.record_codec import HeaderPairs

TP = tuple[str, int]
EMPTY_BATCH_BYTES = HEADER_SIZE
# A record's length, attributes, deltas and length varints: an upper bound for the usual
# shapes (values and keys under 8 KiB, timestamps within 8 s of the batch's first).
RECORD_OVERHEAD_BYTES = 16


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
        "drain_order",
        "eager",
        "encoded",
        "error",
        "in_flight",
        "log_append_time_ms",
        "maybe_written",
        "partition",
        "restamp",
        "retry_at_s",
        "room",
        "sent_behind",
        "topic",
    )

    def __init__(
        self,
        topic: str,
        partition: int,
        compression: Compression,
        batch_bytes: int,
        now_s: float,
        timeout_s: float,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.builder = BatchBuilder(compression)
        self.count = 0
        self.room = batch_bytes - EMPTY_BATCH_BYTES  # bytes left before the batch is full
        self.created_s = now_s
        self.deadline_s = now_s + timeout_s  # delivery timeout
        self.done = trio.Event()
        self.base_offset = -1
        self.log_append_time_ms = -1
        self.error: BaseException | None = None
        self.attempts = 0
        self.retry_at_s = 0.0
        self.encoded: bytes | None = None  # set when the batch is closed for good
        self.callbacks: list[Callable[[ProducerBatch], None]] | None = None
        self.in_flight = False  # taken by the sender, not yet finished or put back
        # The order in which the sender first took the batch (-1: never sent): a batch put
        # back for a retry goes before every batch of its partition taken after it.
        self.drain_order = -1
        # Sent under a producer id the producer has since replaced, and refused as out of
        # sequence (so never written): number it again under the new one.
        self.restamp = False
        # An attempt ended without a refusal that proves it wrote nothing (no answer, a
        # timeout, a leader that moved after appending): the leader may hold the batch, so
        # it must never be numbered again (that would write it twice).
        self.maybe_written = False
        # Sent while a batch of its partition taken before it was still unanswered: the
        # leader may see this one first (a retry of the other, answers from two leaders),
        # so an OUT_OF_ORDER_SEQUENCE for it is not a gap even if the other has landed
        # by the time the refusal is read.
        self.sent_behind = False
        self.eager = False  # opened while the producer was idle: goes without lingering

    @property
    def size(self) -> int:
        """Encoded size in bytes before compression (what the buffer accounts)."""
        return self.builder.size_bytes

    def encode(self) -> bytes:
        """The batch's bytes (built once: retries resend the very same bytes)."""
        if self.encoded is None:
            self.encoded = self.builder.build()
        return self.encoded

    def complete(self, base_offset: int, log_append_time_ms: int = -1) -> None:
        self.base_offset = base_offset
        self.log_append_time_ms = log_append_time_ms
        self._finish()

    def fail(self, error: BaseException) -> None:
        self.error = error
        self._finish()

    def _finish(self) -> None:
        if self.done.is_set():
            return
        self.done.set()
        if self.callbacks:
            callbacks, self.callbacks = self.callbacks, None
            for callback in callbacks:
                callback(self)

    def add_callback(self, callback: Callable[[ProducerBatch], None]) -> None:
        """Run ``callback(batch)`` on completion (at once if the batch is complete)."""
        if self.done.is_set():
            callback(self)
        elif self.callbacks is None:
            self.callbacks = [callback]
        else:
            self.callbacks.append(callback)


class RecordFuture:
    """The outcome of one ``send``: await it for RecordMetadata or the batch's error."""

    __slots__ = ("_batch", "_index", "_timestamp_ms")

    def __init__(self, batch: ProducerBatch, index: int, timestamp_ms: int) -> None:
        self._batch = batch
        self._index = index
        self._timestamp_ms = timestamp_ms

    def done(self) -> bool:
        return self._batch.done.is_set()

    def exception(self) -> BaseException | None:
        """The error of a completed send, None if it succeeded."""
        if not self._batch.done.is_set():
            raise RuntimeError("the record is not acknowledged yet")
        return self._batch.error

    def result(self) -> RecordMetadata:
        """The metadata of a completed send (raises its error)."""
        b = self._batch
        if not b.done.is_set():
            raise RuntimeError("the record is not acknowledged yet")
        if b.error is not None:
            raise b.error
        offset = b.base_offset + self._index if b.base_offset >= 0 else -1
        ts = b.log_append_time_ms if b.log_append_time_ms >= 0 else self._timestamp_ms
        return RecordMetadata(b.topic, b.partition, offset, ts)

    def add_done_callback(self, callback: Callable[[RecordFuture], None]) -> None:
        """Run ``callback(future)`` once the record is acknowledged or has failed.

        Callbacks run in the producer's sender task: they must be quick and must not raise.
        """
        self._batch.add_callback(lambda _batch: callback(self))

    def __await__(self) -> Generator[Any, None, RecordMetadata]:
        done = self._batch.done
        if not done.is_set():
            yield from done.wait().__await__()
        return self.result()


class RecordAccumulator:
    """Per-partition queues of batches.

    ``on_close(topic, partition)`` runs whenever a partition's open batch is closed (full,
    or taken by the sender): the sticky partitioner moves on then. The accumulator owns the
    waits around its queues: the sender's idle wait (:meth:`wait_for_work`, woken by
    :meth:`wake`), senders blocked on a full buffer (:meth:`wait_for_space`) and flushes
    (:meth:`flushing`).
    """

    def __init__(
        self,
        batch_bytes: int,
        linger_s: float,
        compression: Compression,
        delivery_timeout_s: float,
        on_close: Callable[[str, int], None] | None = None,
    ) -> None:
        self.batch_bytes = batch_bytes
        self.linger_s = linger_s
        self.compression = compression
        self.delivery_timeout_s = delivery_timeout_s
        self._on_close = on_close
        self.queues: dict[TP, deque[ProducerBatch]] = {}
        # Batches per partition taken by the sender and not yet finished or put back: while
        # there are none at all (the producer is idle), batches go at once.
        # (Sent in this order; a batch back from a retry is sent again behind the others.)
        self.in_flight: dict[TP, list[ProducerBatch]] = {}
        self.open: dict[str, list[ProducerBatch | None]] = {}
        self._batch_bytes_of: dict[str, int] = {}  # topics whose own limit is lower
        self._drained = 0  # batches taken for a first send so far (drain_order)
        self.buffered_bytes = 0
        self._flushing = 0
        self._wakeup = trio.Event()  # the sender's: something new to look at
        self._space = trio.Event()  # senders blocked on a full buffer: bytes left it

    # -- the waits around the queues -----------------------------------------------------------

    def wake(self) -> None:
        """Tell the sender there is something new to look at (a batch, a change of leader,
        a connection, a failure to retry)."""
        self._wakeup.set()

    def start_round(self) -> None:
        """The sender is about to look at the queues: whatever changes from now on wakes
        its next :meth:`wait_for_work`."""
        self._wakeup = trio.Event()

    async def wait_for_work(self, timeout_s: float) -> None:
        """The sender's idle wait: until :meth:`wake` (since :meth:`start_round`), or
        ``timeout_s`` (the next linger or retry deadline)."""
        with trio.move_on_after(timeout_s):
            await self._wakeup.wait()

    @contextmanager
    def flushing(self) -> Iterator[None]:
        """While inside, every batch is sendable at once (a producer's ``flush``)."""
        self._flushing += 1
        self._wakeup.set()
        try:
            yield
        finally:
            self._flushing -= 1

    async def wait_for_space(
        self, limit_bytes: int, max_block_s: float, check_open: Callable[[], None]
    ) -> None:
        """Until fewer than ``limit_bytes`` are buffered; BufferFullError after
        ``max_block_s``. Open batches keep lingering meanwhile: sending them early under
        sustained back-pressure would shrink every batch to a few records."""
        with trio.move_on_after(max_block_s):
            while self.buffered_bytes >= limit_bytes:
                check_open()
                if self._space.is_set():
                    self._space = trio.Event()  # shared by every waiting sender
                await self._space.wait()
            return
        raise BufferFullError(f"buffer of {limit_bytes} bytes stayed full for {max_block_s}s")

    def add_topic(
        self, topic: str, num_partitions: int, max_batch_bytes: int | None = None
    ) -> None:
        """Make room for a topic's open batches (called when its partition count is known).
        ``max_batch_bytes``: the topic's own limit on a batch (its ``max.message.bytes``),
        when lower than ``batch_bytes``: its batches close there, so the leader takes them."""
        if max_batch_bytes is not None and max_batch_bytes < self.batch_bytes:
            self._batch_bytes_of[topic] = max(max_batch_bytes, 1)
        else:
            self._batch_bytes_of.pop(topic, None)
        slots = self.open.setdefault(topic, [])
        if len(slots) < num_partitions:
            slots.extend([None] * (num_partitions - len(slots)))

    def append(
        self,
        topic: str,
        partition: int,
        timestamp_ms: int,
        key: bytes | None,
        value: bytes | None,
        headers: HeaderPairs | None,
        move_if_full: bool = False,
    ) -> RecordFuture | None:
        """Add a record to the open batch of the partition (``add_topic`` first).

        Returns its future; or None, appending nothing, when ``move_if_full`` is set and the
        record does not fit the open batch: that batch is then closed and the caller may
        choose another partition (the sticky partitioner's request).
        """
        slots = self.open[topic]
        batch = slots[partition]
        if batch is None:
            batch = self._open_batch(topic, partition, slots)
        elif batch.room < RECORD_OVERHEAD_BYTES + (len(value) if value is not None else 0) + (
            len(key) if key is not None else 0
        ):
            self.close(batch)
            if move_if_full:
                return None
            batch = self._open_batch(topic, partition, slots)
        try:
            added = batch.builder.append(timestamp_ms, key, value, headers)
        except BaseException:  # e.g. TypeError for a str value: leave no empty batch behind
            if batch.count == 0:
                self._discard(batch)
            raise
        index = batch.count
        batch.count = index + 1
        self.buffered_bytes += added
        room = batch.room = batch.room - added
        if room <= 0:
            self.close(batch)
        return RecordFuture(batch, index, timestamp_ms)

    def _open_batch(
        self, topic: str, partition: int, slots: list[ProducerBatch | None]
    ) -> ProducerBatch:
        batch = ProducerBatch(
            topic,
            partition,
            self.compression,
            self._batch_bytes_of.get(topic, self.batch_bytes),
            trio.current_time(),
            self.delivery_timeout_s,
        )
        tp = (topic, partition)
        queue = self.queues.get(tp)
        if queue is None:
            queue = self.queues[tp] = deque()
        batch.eager = not queue and not self.in_flight
        queue.append(batch)
        slots[partition] = batch
        self.buffered_bytes += batch.size
        self._wakeup.set()  # the sender must learn this batch's linger deadline
        return batch

    def _discard(self, batch: ProducerBatch) -> None:
        """Drop a batch that never received a record."""
        slots = self.open[batch.topic]
        if slots[batch.partition] is batch:
            slots[batch.partition] = None
        self.queues[(batch.topic, batch.partition)].remove(batch)
        self.buffered_bytes -= batch.size

    def close(self, batch: ProducerBatch) -> None:
        """Take the batch out of the open slot of its partition: no more appends."""
        slots = self.open.get(batch.topic)
        if slots is not None and batch.partition < len(slots) and slots[batch.partition] is batch:
            slots[batch.partition] = None
            if self._on_close is not None:
                self._on_close(batch.topic, batch.partition)
            self._wakeup.set()

    def is_open(self, batch: ProducerBatch) -> bool:
        slots = self.open.get(batch.topic)
        return (
            slots is not None and batch.partition < len(slots) and slots[batch.partition] is batch
        )

    def sendable(self, batch: ProducerBatch, now_s: float) -> bool:
        """May ``batch`` (the head of its queue) go now? The producer is idle (or was when
        the batch was opened), the batch is closed or lingered long enough, or the producer
        is flushing; and it is not backing off after a failure."""
        return batch.retry_at_s <= now_s and (
            self._flushing > 0
            or batch.eager
            or not self.in_flight
            or now_s - batch.created_s >= self.linger_s
            or not self.is_open(batch)
        )

    def ready(self, now_s: float, muted: set[TP]) -> tuple[list[TP], float | None]:
        """Partitions whose first batch may be sent now, and the next time one will be."""
        ready: list[TP] = []
        wake_at: float | None = None
        for tp, queue in self.queues.items():
            if not queue or tp in muted:
                continue
            batch = queue[0]
            if self.sendable(batch, now_s):
                ready.append(tp)
                continue
            at = batch.retry_at_s if batch.retry_at_s > now_s else batch.created_s + self.linger_s
            if wake_at is None or at < wake_at:
                wake_at = at
        return ready, wake_at

    def pop(self, tp: TP) -> ProducerBatch:
        """Take the partition's first batch for sending (closing it if it was open)."""
        batch = self.queues[tp].popleft()
        self.close(batch)
        if batch.drain_order < 0:
            batch.drain_order = self._drained
            self._drained += 1
        batch.encode()
        batch.in_flight = True
        self.in_flight.setdefault(tp, []).append(batch)
        return batch

    def _landed(self, batch: ProducerBatch) -> None:
        """The batch is no longer in flight (finished, or back in its queue)."""
        if batch.in_flight:
            batch.in_flight = False
            tp = (batch.topic, batch.partition)
            left = self.in_flight[tp]
            left.remove(batch)
            if not left:
                del self.in_flight[tp]

    def requeue(self, batch: ProducerBatch, retry_at_s: float) -> None:
        """Put a batch back for a retry after ``retry_at_s``, in its place: before every
        batch of its partition that was first sent after it or never sent. Several batches
        of a partition may be in flight and come back in any order (a request abandoned on
        a moved leader, answers from two leaders); each finds its place, so they go again in
        the order they were first sent."""
        self._landed(batch)
        batch.retry_at_s = retry_at_s
        batch.attempts += 1
        tp = (batch.topic, batch.partition)
        queue = self.queues.get(tp)
        if queue is None:
            queue = self.queues[tp] = deque()
        place = 0
        for queued in queue:
            if queued.drain_order < 0 or queued.drain_order > batch.drain_order:
                break
            place += 1
        queue.insert(place, batch)
        self._wakeup.set()

    def release(self, batch: ProducerBatch) -> None:
        """The batch is finished: its bytes leave the buffer (waiting senders go on)."""
        self._landed(batch)
        self.buffered_bytes -= batch.size
        self._space.set()

    def expired(self, now_s: float) -> list[ProducerBatch]:
        """Remove and return queued batches whose delivery timeout has passed."""
        out: list[ProducerBatch] = []
        for queue in self.queues.values():
            # Later batches of a partition were created later: stop at the first live one.
            while queue and queue[0].deadline_s <= now_s:
                batch = queue.popleft()
                self.close(batch)
                out.append(batch)
        return out

    def pending(self) -> list[ProducerBatch]:
        """Every queued batch, open ones included."""
        return [b for q in self.queues.values() for b in q]

    def drain_all(self) -> list[ProducerBatch]:
        """Remove and return every queued batch (the producer is closing)."""
        out = self.pending()
        for batch in out:
            self.close(batch)
        self.queues.clear()
        return out
