"""A Kafka classic-group member as its own process (``--client kafka``), so the harness can
SIGKILL or SIGTERM it like a native member.

Run as ``python -m rillet.chaos.kafka_member_process`` with the arguments of
``member_process``. It consumes with a confluent-kafka Consumer (``group.id``, automatic
commits off, ``auto.offset.reset=earliest``, the default isolation level) subscribed to the
topic, and for every batch ``consume`` returns: appends one JSON line per record to the
output file and flushes it, then commits the batch's next offsets synchronously. So, as for
native members, a record in the file was handed to the application before any commit
covered it. Rebalance callbacks (``assigned``, ``revoked``, ``lost``, with the member id)
and each commit's outcome (``committed`` / ``commit-failed``) are logged in the same file;
the rows are built by ``kafka_events``. SIGTERM ends the loop after the batch in hand
(consumed and committed): the member closes the consumer (leaving the group) and exits 0.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from types import FrameType
from typing import IO, Any

from confluent_kafka import Consumer, KafkaException, TopicPartition

from rillet.chaos import kafka_events

POLL_S = 0.2
BATCH_RECORDS = 500
CLOSE_TIMEOUT_S = 10.0


class _Journal:
    """The member's output file: one JSON line per event, flushed by the caller."""

    def __init__(self, f: IO[str], t0: float) -> None:
        self._f, self._t0 = f, t0

    def line(self, row: dict[str, Any]) -> None:
        row["t"] = round(time.monotonic() - self._t0, 6)
        self._f.write(json.dumps(row, separators=(",", ":")) + "\n")

    def flush(self) -> None:
        self._f.flush()


def consumer_config(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "bootstrap.servers": args.bootstrap,
        "group.id": args.group,
        "client.id": f"chaos-{args.name}",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": args.session_ms,
        "heartbeat.interval.ms": max(args.session_ms // 6, 100),
    }


def run(args: argparse.Namespace, stopping: threading.Event) -> None:
    with open(args.out, "a", encoding="utf-8") as f:
        journal = _Journal(f, args.t0)
        consumer = Consumer(consumer_config(args))

        def rebalanced(event: str) -> Any:
            def callback(c: Consumer, partitions: list[TopicPartition]) -> None:
                ps = [tp.partition for tp in partitions if tp.topic == args.topic]
                journal.line(kafka_events.assignment_row(args.name, event, ps, c.memberid()))
                journal.flush()

            return callback

        consumer.subscribe(
            [args.topic],
            on_assign=rebalanced("assigned"),
            on_revoke=rebalanced("revoked"),
            on_lost=rebalanced("lost"),
        )
        try:
            while not stopping.is_set():
                _consume_once(consumer, journal, args)
        finally:
            try:
                consumer.close()  # leaves the group
            except (KafkaException, RuntimeError) as exc:
                print(f"close: {exc!r}", file=sys.stderr, flush=True)
            journal.flush()


def _consume_once(consumer: Consumer, journal: _Journal, args: argparse.Namespace) -> None:
    try:
        messages = consumer.consume(BATCH_RECORDS, POLL_S)
    except KafkaException as exc:
        print(f"consume: {exc!r}", file=sys.stderr, flush=True)
        return
    consumed: list[tuple[int, int]] = []
    for msg in messages:
        error = msg.error()
        if error is not None:
            print(f"consume: {error}", file=sys.stderr, flush=True)
            continue
        partition, offset = msg.partition(), msg.offset()
        if partition is None or offset is None:
            continue
        journal.line(kafka_events.received_row(args.name, partition, offset, msg.value()))
        consumed.append((partition, offset))
    if not consumed:
        return
    journal.flush()  # on disk before the commit that covers it
    offsets = kafka_events.offsets_to_commit(consumed)
    error_text: str | None = None
    try:
        consumer.commit(
            offsets=[TopicPartition(args.topic, p, o) for p, o in sorted(offsets.items())],
            asynchronous=False,
        )
    except KafkaException as exc:  # e.g. fenced by a rebalance: the next owner re-reads
        error_text = str(exc)
    journal.line(kafka_events.commit_row(args.name, offsets, error_text))
    journal.flush()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--session-ms", type=int, default=6_000)
    p.add_argument("--t0", type=float, default=0.0, help="time.monotonic() of the run start")
    args = p.parse_args()
    stopping = threading.Event()

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, on_sigterm)
    run(args, stopping)


if __name__ == "__main__":
    main()
