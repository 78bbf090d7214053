"""A Kafka-client group member for the Kafka-listener tests (SIGKILL-able).

Usage: python kafka_group_member.py CLIENT BOOTSTRAP GROUP TOPIC OUT_FILE SESSION_MS
CLIENT is confluent-kafka, kafka-python or aiokafka. Subscribes (classic JoinGroup and
SyncGroup), commits after every batch, and appends one JSON line per record to OUT_FILE
({"p": partition, "o": offset, "v": value}), flushed at once, so whatever the test reads
was really delivered to this member before it died. SIGTERM closes the consumer (commit and
leave).
"""

from __future__ import annotations

import json
import signal
import sys
from typing import Any, TextIO

stopping = False


def _stop(*_: Any) -> None:
    global stopping
    stopping = True


def _write(out: TextIO, partition: int, offset: int, value: bytes) -> None:
    out.write(json.dumps({"p": partition, "o": offset, "v": value.decode()}) + "\n")
    out.flush()


def run_confluent(bootstrap: str, group: str, topic: str, out: TextIO, session_ms: int) -> None:
    import confluent_kafka

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "session.timeout.ms": session_ms,
            "heartbeat.interval.ms": max(session_ms // 10, 100),
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    try:
        while not stopping:
            messages = consumer.consume(100, 0.2)
            for m in messages:
                if m.error() is None:
                    _write(out, m.partition(), m.offset(), m.value())
            if messages:
                consumer.commit(asynchronous=False)
    finally:
        consumer.close()


def run_kafka_python(bootstrap: str, group: str, topic: str, out: TextIO, session_ms: int) -> None:
    import kafka

    consumer = kafka.KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        session_timeout_ms=session_ms,
        heartbeat_interval_ms=max(session_ms // 10, 100),
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    try:
        while not stopping:
            batches = consumer.poll(timeout_ms=200)
            for records in batches.values():
                for r in records:
                    _write(out, r.partition, r.offset, r.value)
            if batches:
                consumer.commit()
    finally:
        consumer.close()


def run_aiokafka(bootstrap: str, group: str, topic: str, out: TextIO, session_ms: int) -> None:
    import asyncio

    import aiokafka

    async def consume() -> None:
        consumer = aiokafka.AIOKafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group,
            session_timeout_ms=session_ms,
            heartbeat_interval_ms=max(session_ms // 10, 100),
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await consumer.start()
        try:
            while not stopping:
                batches = await consumer.getmany(timeout_ms=200)
                for records in batches.values():
                    for r in records:
                        _write(out, r.partition, r.offset, r.value)
                if batches:
                    await consumer.commit()
        finally:
            await consumer.stop()

    asyncio.run(consume())


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop)
    client, bootstrap, group, topic, path, session = sys.argv[1:7]
    run = {
        "confluent-kafka": run_confluent,
        "kafka-python": run_kafka_python,
        "aiokafka": run_aiokafka,
    }[client]
    with open(path, "a", encoding="utf-8") as f:
        run(bootstrap, group, topic, f, int(session))
