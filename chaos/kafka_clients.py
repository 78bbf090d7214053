"""The workload through Kafka clients (``--client kafka``): confluent-kafka producers and the
coordinator's view of a classic group, both speaking Kafka's protocol to the nodes' Kafka
listeners.

``KafkaProducerWorker`` is the Kafka-client twin of ``workload.ProducerWorker``: a thread
with an idempotent acks=all confluent-kafka Producer writing the same values at the same
rate to the same partitions, recording invocations and delivery reports (translated by
``kafka_events``) in the same history format. librdkafka calls delivery callbacks from
``poll``/``flush`` in the calling thread, so the one thread both sends and serves them; it
waits (polling) while ``max_pending`` records are unacknowledged, and its final flush is
bounded by the delivery timeout.

``ClassicGroupView`` gives the group sampler a classic group's generation and its members'
assignments (decoded from the consumer protocol's bytes) from one node. It asks over rillet's
own protocol: Kafka's DescribeGroups has no generation id, and librdkafka's admin client
aborted the whole harness process once (an assertion in its request queue) when a node was
killed under it. confluent-kafka is imported lazily: it is a development extra, and
``rillet chaos run --client kafka`` says in one line when it is missing.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import trio

from rillet.chaos import kafka_events
from rillet.chaos.errors import ChaosError
from rillet.chaos.history import value_of
from rillet.chaos.workload import ProducerOptions, ProducerThread
from rillet.client.connection import BrokerConnection
from rillet.client.errors import RilletError
from rillet.wire import classic_group_messages as cgm
from rillet.wire import group_messages as gm

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message, Producer

log = logging.getLogger(__name__)
FLUSH_SLACK_S = 30.0
POLL_S = 0.05
# librdkafka's own default (message.timeout.ms). A record that times out in the client makes
# an idempotent librdkafka producer bump its epoch and number every record it still holds
# from 0 again, also records whose earlier attempt may have been written: those are then
# written twice (librdkafka issue #4953; its maintainers: only transactions avoid it). With
# the native workload's 30 s, seeds 1 and 2 on a loaded machine (node restarts of 50 s) gave
# thousands of such duplicates, so Kafka producers wait out any outage the harness makes.
KAFKA_DELIVERY_TIMEOUT_MS = 300_000
# A classic group sample: generation, member id -> assigned (topic, partition)s.
Sample = tuple[int, dict[str, list[tuple[str, int]]]]
LIBRDKAFKA_LOG_LEVEL = 2  # syslog levels: critical and worse only


def unavailable_reason() -> str | None:
    """Why the Kafka clients cannot run here (None when they can)."""
    try:
        import confluent_kafka  # noqa: F401
    except ImportError as exc:
        return f"confluent-kafka is not installed ({exc}); install rillet with the dev extras"
    return None


def producer_config(name: str, bootstrap: str, options: ProducerOptions) -> dict[str, Any]:
    """The producer's settings: idempotent, acks=all, the native workload's request timeout
    and backoff, librdkafka's default delivery timeout (see KAFKA_DELIVERY_TIMEOUT_MS)."""
    return {
        "bootstrap.servers": bootstrap,
        "client.id": f"chaos-{name}",
        "acks": "all",
        "enable.idempotence": options.idempotent,
        "linger.ms": options.linger_ms,
        "delivery.timeout.ms": KAFKA_DELIVERY_TIMEOUT_MS,
        "request.timeout.ms": options.request_timeout_ms,
        "retry.backoff.ms": 20,
        "retry.backoff.max.ms": 500,
        # Refused connections to a killed node are the point of the run, not news: the
        # outcomes that matter arrive as delivery reports.
        "log_level": LIBRDKAFKA_LOG_LEVEL,
    }


class KafkaProducerWorker(ProducerThread):
    """One producer thread; ``stop`` ends sending, waits for outcomes, closes the producer.
    ``_pending`` is touched by this worker's thread only (callbacks run in poll)."""

    def __repr__(self) -> str:
        return f"KafkaProducerWorker({self.name})"

    def stop(self, timeout_s: float | None = None) -> bool:
        """Stop sending and wait for every outcome (bounded); True if the thread ended."""
        if timeout_s is None:
            timeout_s = KAFKA_DELIVERY_TIMEOUT_MS / 1000 + FLUSH_SLACK_S
        self._stop.set()
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def _main(self) -> None:
        try:
            from confluent_kafka import Producer

            config = producer_config(self.name, self._bootstrap, self._options)
            config["error_cb"] = self._on_client_error
            producer = Producer(config)
            self._loop(producer)
            self._flush(producer)
        except BaseException as exc:  # recorded, reported by the runner
            self.error = exc
            log.exception("producer %s failed", self.name)

    def _on_client_error(self, error: KafkaError) -> None:
        log.debug("producer %s: %s", self.name, error)

    def _loop(self, producer: Producer) -> None:
        interval = 1.0 / self._options.rate
        next_at = time.monotonic()
        seq = 0
        while not self._stop.is_set():
            while self._pending >= self._options.max_pending and not self._stop.is_set():
                producer.poll(POLL_S)
            if self._stop.is_set():
                break
            self._send(producer, seq)
            seq += 1
            next_at += interval
            delay = next_at - time.monotonic()
            producer.poll(max(delay, 0.0))  # serves delivery reports while it waits
            if delay < -1.0:
                next_at = time.monotonic()  # fell behind (backpressure): do not burst

    def _flush(self, producer: Producer) -> None:
        """Every outcome is known within the delivery timeout (what is left counts as
        unknown: an invocation without an outcome)."""
        deadline = time.monotonic() + KAFKA_DELIVERY_TIMEOUT_MS / 1000 + 5.0
        while self._pending > 0 and (left := deadline - time.monotonic()) > 0:
            producer.flush(min(left, 1.0))
        if self._pending:
            log.error("producer %s: %d records without an outcome", self.name, self._pending)

    def _send(self, producer: Producer, seq: int) -> None:
        from confluent_kafka import KafkaException

        value = value_of(self.name, seq)
        partition = seq % self._partitions
        op = {"f": "send", "process": self.name, "value": value, "partition": partition}
        self._history.write({"type": "invoke", **op})

        def on_delivery(error: KafkaError | None, msg: Message) -> None:
            self._pending -= 1
            self._history.write(
                kafka_events.delivered(
                    op,
                    None if error is None else str(error),
                    msg.partition(),
                    msg.offset(),
                )
            )

        try:
            producer.produce(
                self._topic, value=value.encode(), partition=partition, on_delivery=on_delivery
            )
        except (BufferError, KafkaException) as exc:  # never queued: certainly not written
            self._history.write(kafka_events.refused(op, repr(exc)))
            return
        self._pending += 1
        self.sent += 1


class ClassicGroupView:
    """A classic group's generation and decoded assignments, from one node's committed state.

    On one connection to one node: the group's generation (DescribeGroups), the members'
    assignment bytes (the classic DescribeGroups that Kafka's listener translates to), the
    generation again. A node's committed state only moves forward, so when both generations
    agree every assignment read belongs to that generation; otherwise the sample is dropped
    (None). Nodes are tried in turn; a node that does not answer costs one request timeout.
    """

    def __init__(self, bootstrap: str, group: str, request_timeout_s: float) -> None:
        self._nodes = [_host_port(a) for a in bootstrap.split(",") if a]
        self._group = group
        self._timeout_s = request_timeout_s
        self._next = 0

    def sample(self) -> Sample | None:
        """(generation, member id -> assigned partitions), or None for no consistent answer;
        raises ChaosError when no node answered."""
        for _ in range(len(self._nodes)):
            host, port = self._nodes[self._next % len(self._nodes)]
            self._next += 1
            try:
                return trio.run(self._ask, host, port)
            except ChaosError as exc:
                log.debug("classic group sample from %s:%d: %s", host, port, exc)
        raise ChaosError(f"no node described group {self._group}")

    async def _ask(self, host: str, port: int) -> Sample | None:
        try:
            with trio.fail_after(3 * self._timeout_s):
                async with trio.open_nursery() as nursery:
                    conn = BrokerConnection(host, port, client_id="rillet-chaos-sampler")
                    await conn.connect(nursery, self._timeout_s)
                    try:
                        before = await conn.request(
                            gm.DescribeGroupsRequest([self._group]), self._timeout_s
                        )
                        classic = await conn.request(
                            cgm.ClassicDescribeGroupsRequest([self._group]), self._timeout_s
                        )
                        after = await conn.request(
                            gm.DescribeGroupsRequest([self._group]), self._timeout_s
                        )
                    finally:
                        conn.close()
        except* (RilletError, trio.TooSlowError) as group:
            raise ChaosError(f"{group.exceptions[0]!r}") from None
        generation = before.groups[0].generation
        if after.groups[0].generation != generation:
            return None
        members = {
            m.member_id: kafka_events.decode_assignment(m.member_assignment)
            for m in classic.groups[0].members
        }
        return generation, members


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)
