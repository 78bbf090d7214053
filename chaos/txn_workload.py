"""The transactional workload's clients (``rillet chaos txn``): confluent-kafka threads.

- ``TxnWriter``: a transactional producer writing transactions of 2-4 records to distinct
  partitions of the input topic, committing most and aborting some (seeded choice).
- ``CtpWorker``: consume-transform-produce — a read_committed consumer in a group reads the
  input topic, and for each batch a transactional producer writes one output per input
  record and sends the consumer's offsets in the same transaction
  (``send_offsets_to_transaction``); after a failed transaction it rewinds to the group's
  committed offsets, as Kafka's exactly-once loop does.
- ``Reader``: reads every partition of a topic from the start at one isolation level and
  records what it consumed and when.
- ``OffsetSampler``: the group's committed offsets, sampled.

Each records rows for ``txn_checker`` (see there for the formats) through the run's
``HistoryWriter``. Outcomes are conservative: ``commit`` only when commit_transaction
returned, ``abort`` only when abort_transaction returned, ``unknown`` otherwise (a fatal
error, a commit that timed out): the producer is then built again, and its
``init_transactions`` fences the old epoch and settles whatever was left open.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from typing import TYPE_CHECKING, Any

from rillet.chaos.history import HistoryWriter
from rillet.chaos.kafka_clients import LIBRDKAFKA_LOG_LEVEL

if TYPE_CHECKING:
    from confluent_kafka import Consumer, Producer

log = logging.getLogger(__name__)
TXN_TIMEOUT_MS = 30_000
CALL_TIMEOUT_S = 30.0
POLL_S = 0.2
ABORT_RATIO = 0.25
TXN_INTERVAL_S = 0.1
CTP_BATCH = 50
COMMIT_RETRIES = 3


def producer_config(bootstrap: str, transactional_id: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "transactional.id": transactional_id,
        "transaction.timeout.ms": TXN_TIMEOUT_MS,
        "message.timeout.ms": TXN_TIMEOUT_MS,
        "acks": "all",
        "linger.ms": 5,
        "retry.backoff.ms": 20,
        "retry.backoff.max.ms": 500,
        "log_level": LIBRDKAFKA_LOG_LEVEL,
    }


def consumer_config(bootstrap: str, group: str, iso: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "isolation.level": "read_committed" if iso == "committed" else "read_uncommitted",
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 1000,
        "log_level": LIBRDKAFKA_LOG_LEVEL,
    }


class _Thread:
    """A daemon thread running ``_main`` until ``stop``; an exception is kept in ``error``."""

    def __init__(self, name: str, history: HistoryWriter) -> None:
        self.name = name
        self.history = history
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float = 2 * CALL_TIMEOUT_S + 10.0) -> bool:
        self._stop.set()
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def _run(self) -> None:
        try:
            self._main()
        except BaseException as exc:  # recorded, reported by the runner
            self.error = exc
            log.exception("%s failed", self.name)

    def _main(self) -> None:
        raise NotImplementedError


class _Transactional(_Thread):
    """A transactional producer with the outcome rules above."""

    def __init__(self, name: str, bootstrap: str, history: HistoryWriter) -> None:
        super().__init__(name, history)
        self._bootstrap = bootstrap
        self._producer: Producer | None = None

    def _fresh_producer(self) -> Producer:
        from confluent_kafka import KafkaException, Producer

        # The old producer is dropped as it is (after a fatal error every call on it
        # raises; the new one's init_transactions fences it and ends what it left open).
        self._producer = None
        while not self._stop.is_set():
            producer = Producer(producer_config(self._bootstrap, f"chaos-{self.name}"))
            try:
                producer.init_transactions(CALL_TIMEOUT_S)
            except KafkaException as exc:
                log.info("%s: init_transactions: %s", self.name, exc)
                time.sleep(0.5)
                continue
            self._producer = producer
            return producer
        raise _Stopped

    def _finish(self, producer: Producer, commit: bool) -> str:
        """Commit (or abort) the open transaction: ``commit``, ``abort`` or ``unknown``."""
        from confluent_kafka import KafkaException

        if commit:
            for _ in range(COMMIT_RETRIES):
                try:
                    producer.commit_transaction(CALL_TIMEOUT_S)
                    return "commit"
                except KafkaException as exc:
                    error = exc.args[0]
                    log.info("%s: commit: %s", self.name, error)
                    if error.txn_requires_abort():
                        break
                    if not error.retriable():
                        return "unknown"
            else:
                return "unknown"
        try:
            producer.abort_transaction(CALL_TIMEOUT_S)
            return "abort"
        except KafkaException as exc:
            log.info("%s: abort: %s", self.name, exc)
            return "unknown"


class _Stopped(Exception):
    """Stop was asked while waiting for a producer."""


class TxnWriter(_Transactional):
    def __init__(
        self,
        name: str,
        bootstrap: str,
        topic: str,
        partitions: int,
        history: HistoryWriter,
        seed: int,
    ) -> None:
        super().__init__(name, bootstrap, history)
        self._topic = topic
        self._partitions = partitions
        self._rng = random.Random(f"{seed}-{name}")
        self.committed = 0
        self.committed_values: set[str] = set()  # what read_committed must show in the end

    def _main(self) -> None:
        from confluent_kafka import KafkaException

        try:
            producer = self._fresh_producer()
        except _Stopped:
            return
        n = 0
        while not self._stop.is_set():
            n += 1
            txn = f"{self.name}-{n}"
            count = self._rng.randint(2, min(4, self._partitions))
            targets = self._rng.sample(range(self._partitions), count)
            commit = self._rng.random() >= ABORT_RATIO
            writes: list[tuple[int, str]] = [(p, f"{txn}/{i}") for i, p in enumerate(targets)]
            outcome = "unknown"
            t_end = None
            try:
                producer.begin_transaction()
                for p, v in writes:
                    producer.produce(self._topic, value=v.encode(), partition=p)
                if not commit:
                    # Sent before the abort (else librdkafka purges them unsent), so
                    # aborted records are in the log for read_committed to skip.
                    producer.flush(CALL_TIMEOUT_S)
                t_end = self.history.clock()
                outcome = self._finish(producer, commit)
            except (KafkaException, BufferError) as exc:
                log.info("%s: %s", self.name, exc)
                t_end = t_end if t_end is not None else self.history.clock()
                outcome = self._finish(producer, False) if _abortable(exc) else "unknown"
            self.history.write(
                {
                    "type": "txn",
                    "process": self.name,
                    "txn": txn,
                    "writes": writes,
                    "outcome": outcome,
                    "t_end": t_end,
                    "intended": "commit" if commit else "abort",
                }
            )
            if outcome == "commit":
                self.committed += 1
                self.committed_values.update(v for _, v in writes)
            if outcome == "unknown":
                try:
                    producer = self._fresh_producer()
                except _Stopped:
                    return
            self._stop.wait(TXN_INTERVAL_S)


def _abortable(exc: BaseException) -> bool:
    error = exc.args[0] if exc.args else None
    return bool(getattr(error, "txn_requires_abort", lambda: False)())


class CtpWorker(_Transactional):
    def __init__(
        self,
        name: str,
        bootstrap: str,
        in_topic: str,
        out_topic: str,
        partitions: int,
        group: str,
        history: HistoryWriter,
    ) -> None:
        super().__init__(name, bootstrap, history)
        self._in, self._out, self._partitions, self._group = in_topic, out_topic, partitions, group
        self.committed = 0
        self.committed_values: set[str] = set()

    def _main(self) -> None:
        from confluent_kafka import Consumer

        consumer = Consumer(consumer_config(self._bootstrap, self._group, "committed"))
        consumer.subscribe([self._in])
        try:
            producer = self._fresh_producer()
            n = 0
            while not self._stop.is_set():
                n += 1
                producer = self._once(consumer, producer, f"{self.name}-{n}")
        except _Stopped:
            pass
        finally:
            consumer.close()

    def _once(self, consumer: Consumer, producer: Producer, txn: str) -> Producer:
        from confluent_kafka import KafkaException, TopicPartition

        try:
            messages = [m for m in consumer.consume(CTP_BATCH, POLL_S) if m.error() is None]
        except KafkaException as exc:  # the group's trouble; the next poll tries again
            log.info("%s: consume: %s", self.name, exc)
            return producer
        if not messages:
            return producer
        inputs = [(m.partition() or 0, m.offset() or 0) for m in messages]
        outputs = [
            (p, f"ctp|{p}|{o}|{value_text(m.value())}")
            for (p, o), m in zip(inputs, messages, strict=True)
        ]
        nxt: dict[int, int] = {}
        for p, o in inputs:
            nxt[p] = max(nxt.get(p, 0), o + 1)
        t_end = None
        try:
            producer.begin_transaction()
            for p, v in outputs:
                producer.produce(self._out, value=v.encode(), partition=p)
            producer.send_offsets_to_transaction(
                [TopicPartition(self._in, p, o) for p, o in sorted(nxt.items())],
                consumer.consumer_group_metadata(),
                CALL_TIMEOUT_S,
            )
            t_end = self.history.clock()
            outcome = self._finish(producer, True)
        except (KafkaException, BufferError) as exc:
            log.info("%s: %s", self.name, exc)
            outcome = self._finish(producer, False) if _abortable(exc) else "unknown"
        self.history.write(
            {
                "type": "ctp",
                "process": self.name,
                "txn": txn,
                "inputs": inputs,
                "outputs": outputs,
                "offsets": {str(p): o for p, o in nxt.items()},
                "outcome": outcome,
                "t_end": t_end,
            }
        )
        if outcome == "commit":
            self.committed += 1
            self.committed_values.update(v for _, v in outputs)
            return producer
        _rewind(consumer, self._in)
        return self._fresh_producer() if outcome == "unknown" else producer


def value_text(value: str | bytes | None) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return value or ""


def _rewind(consumer: Consumer, topic: str) -> None:
    """Back to the group's committed offsets (what the failed transaction read is read again)."""
    from confluent_kafka import OFFSET_BEGINNING, KafkaException

    try:
        assigned = consumer.assignment()
        for tp in consumer.committed(assigned, CALL_TIMEOUT_S):
            if tp.topic == topic:
                tp.offset = tp.offset if tp.offset >= 0 else OFFSET_BEGINNING
                consumer.seek(tp)
    except KafkaException as exc:
        log.info("rewind: %s", exc)


class Reader(_Thread):
    def __init__(
        self,
        name: str,
        bootstrap: str,
        topic: str,
        partitions: int,
        iso: str,
        history: HistoryWriter,
    ) -> None:
        super().__init__(name, history)
        self._bootstrap, self._topic, self._partitions, self._iso = (
            bootstrap,
            topic,
            partitions,
            iso,
        )
        self.read = 0

    def _main(self) -> None:
        from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

        consumer = Consumer(consumer_config(self._bootstrap, f"chaos-{self.name}", self._iso))
        consumer.assign(
            [TopicPartition(self._topic, p, OFFSET_BEGINNING) for p in range(self._partitions)]
        )
        try:
            while not self._stop.is_set():
                try:
                    messages = consumer.consume(500, POLL_S)
                except KafkaException as exc:
                    log.info("%s: consume: %s", self.name, exc)
                    continue
                records = [
                    [m.partition(), m.offset(), value_text(m.value())]
                    for m in messages
                    if m.error() is None
                ]
                if records:
                    self.read += len(records)
                    self.history.write(
                        {
                            "type": "reads",
                            "reader": self.name,
                            "iso": self._iso,
                            "topic": self._topic,
                            "t": self.history.clock(),
                            "records": records,
                        }
                    )
        finally:
            consumer.close()


class OffsetSampler(_Thread):
    INTERVAL_S = 0.5

    def __init__(
        self, bootstrap: str, group: str, topic: str, partitions: int, history: HistoryWriter
    ) -> None:
        super().__init__("offsets", history)
        self._bootstrap, self._group, self._topic, self._partitions = (
            bootstrap,
            group,
            topic,
            partitions,
        )

    def sample(self, final: bool = False) -> bool:
        offsets = committed_offsets(self._bootstrap, self._group, self._topic, self._partitions)
        if offsets is None:
            return False
        row: dict[str, Any] = {
            "type": "offsets",
            "t": self.history.clock(),
            "offsets": {str(p): o for p, o in offsets.items()},
        }
        if final:
            row["final"] = True
        self.history.write(row)
        return True

    def _main(self) -> None:
        while not self._stop.wait(self.INTERVAL_S):
            self.sample()


def committed_offsets(
    bootstrap: str, group: str, topic: str, partitions: int
) -> dict[int, int] | None:
    """The group's committed offsets (OffsetFetch, no joining), or None when not answered."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer(consumer_config(bootstrap, group, "committed"))
    try:
        tps = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], 5.0)
    except KafkaException as exc:
        log.debug("offsets: %s", exc)
        return None
    finally:
        consumer.close()
    return {int(tp.partition): int(tp.offset) for tp in tps}
