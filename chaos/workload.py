"""The writing and reading sides of the workload: idempotent acks=all producers, final read.

Each ``ProducerWorker`` is a thread with its own BlockingProducer writing unique values
("w1:0", "w1:1", ...) at a steady rate, partition ``seq % partitions`` (so every producer
writes every partition, in order), and records each send in the history when it is invoked
and when its future resolves. Outcomes are classified conservatively: only a record the
producer refused to queue is ``fail``; every error after it was queued is ``unknown``,
because a retried batch may have been appended before the error that ended it.

Limits: at most ``max_pending`` records unacknowledged per producer (the loop waits, it does
not grow memory), a delivery timeout per record, a deadline for the final flush.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field

from rillet.chaos.history import HistoryWriter, value_of
from rillet.client import BlockingConsumer, BlockingProducer, RecordMetadata, TopicPartition
from rillet.client.errors import RilletError

log = logging.getLogger(__name__)
MAX_PENDING = 2_000
DELIVERY_TIMEOUT_MS = 30_000
REQUEST_TIMEOUT_MS = 5_000
JOIN_TIMEOUT_S = DELIVERY_TIMEOUT_MS / 1000 + 30


@dataclass(frozen=True, slots=True)
class ProducerOptions:
    rate: float = 100.0  # records/s per producer
    max_pending: int = MAX_PENDING
    delivery_timeout_ms: int = DELIVERY_TIMEOUT_MS
    request_timeout_ms: int = REQUEST_TIMEOUT_MS
    linger_ms: int = 2
    idempotent: bool = True


class ProducerThread:
    """What every workload producer shares, whichever client it drives: one thread that
    sends until told to stop, counts what it sent and keeps the error that ended it.
    Subclasses write ``_main`` (send, then wait for every outcome) and ``stop``."""

    def __init__(
        self,
        name: str,
        bootstrap: str,
        topic: str,
        partitions: int,
        history: HistoryWriter,
        options: ProducerOptions,
    ) -> None:
        self.name = name
        self._bootstrap = bootstrap
        self._topic = topic
        self._partitions = partitions
        self._history = history
        self._options = options
        self._stop = threading.Event()
        self._pending = 0
        self.sent = 0
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name=f"chaos-{name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _main(self) -> None:
        raise NotImplementedError


class ProducerWorker(ProducerThread):
    """One producer thread; ``stop`` ends sending, waits for outcomes, closes the producer."""

    def __init__(
        self,
        name: str,
        bootstrap: str,
        topic: str,
        partitions: int,
        history: HistoryWriter,
        options: ProducerOptions,
    ) -> None:
        self._cond = threading.Condition()
        super().__init__(name, bootstrap, topic, partitions, history, options)

    def stop(self, timeout_s: float = JOIN_TIMEOUT_S) -> bool:
        """Stop sending and wait for every outcome (bounded); True if the thread ended."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def _main(self) -> None:
        o = self._options
        try:
            with BlockingProducer(
                self._bootstrap,
                acks="all",
                enable_idempotence=o.idempotent,
                linger_ms=o.linger_ms,
                delivery_timeout_ms=o.delivery_timeout_ms,
                request_timeout_ms=o.request_timeout_ms,
                retry_backoff_ms=20,
                retry_backoff_max_ms=500,
                client_id=f"chaos-{self.name}",
            ) as producer:
                self._loop(producer)
                producer.flush()  # every outcome is known (delivery timeout bounds it)
        except BaseException as exc:  # recorded, reported by the runner
            self.error = exc
            log.exception("producer %s failed", self.name)

    def _loop(self, producer: BlockingProducer) -> None:
        interval = 1.0 / self._options.rate
        next_at = time.monotonic()
        seq = 0
        while not self._stop.is_set():
            with self._cond:
                while self._pending >= self._options.max_pending and not self._stop.is_set():
                    self._cond.wait(0.5)
            if self._stop.is_set():
                break
            self._send(producer, seq)
            seq += 1
            next_at += interval
            delay = next_at - time.monotonic()
            if delay > 0:
                self._stop.wait(delay)
            elif delay < -1.0:
                next_at = time.monotonic()  # fell behind (backpressure): do not burst

    def _send(self, producer: BlockingProducer, seq: int) -> None:
        value = value_of(self.name, seq)
        partition = seq % self._partitions
        op = {"f": "send", "process": self.name, "value": value, "partition": partition}
        self._history.write({"type": "invoke", **op})
        try:
            future = producer.send(self._topic, value.encode(), partition=partition)
        except RilletError as exc:  # never queued: certainly not written
            self._history.write({"type": "fail", **op, "error": repr(exc)})
            return
        with self._cond:
            self._pending += 1
        self.sent += 1
        future.add_done_callback(lambda f: self._done(op, f))

    def _done(self, op: dict[str, object], future: Future[RecordMetadata]) -> None:
        error = future.exception()
        if error is None:
            md = future.result()
            self._history.write({"type": "ok", **op, "offset": md.offset})
        else:
            self._history.write({"type": "unknown", **op, "error": repr(error)[:300]})
        with self._cond:
            self._pending -= 1
            self._cond.notify_all()


@dataclass(slots=True)
class FinalRead:
    records: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    end_offsets: dict[int, int] = field(default_factory=dict)
    read_upto: dict[int, int] = field(default_factory=dict)
    error: str | None = None


def final_read(bootstrap: str, topic: str, partitions: int, timeout_s: float) -> FinalRead:
    """Read every partition from offset 0 up to its high watermark, within ``timeout_s``."""
    out = FinalRead()
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    deadline = time.monotonic() + timeout_s
    try:
        with BlockingConsumer(bootstrap, request_timeout_ms=REQUEST_TIMEOUT_MS) as consumer:
            while not out.end_offsets:
                try:
                    ends = consumer.end_offsets(tps)
                    out.end_offsets = {tp.partition: o for tp, o in ends.items()}
                except RilletError as exc:
                    if time.monotonic() >= deadline:
                        out.error = f"end offsets: {exc!r}"
                        return out
                    time.sleep(0.2)
            consumer.assign(tps)
            for tp in tps:
                consumer.seek(tp, 0)
                out.records[tp.partition] = []
                out.read_upto[tp.partition] = 0
            while time.monotonic() < deadline and any(
                out.read_upto[p] < out.end_offsets.get(p, 0) for p in range(partitions)
            ):
                for r in consumer.poll(timeout_ms=200):
                    value = r.value.decode(errors="replace") if r.value is not None else ""
                    out.records[r.partition].append((r.offset, value))
                    out.read_upto[r.partition] = max(out.read_upto[r.partition], r.offset + 1)
    except RilletError as exc:
        out.error = f"final read: {exc!r}"
    return out
