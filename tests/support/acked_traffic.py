"""acks=all traffic into one partition while a cluster changes, and the exactly-once check
afterwards (every acknowledged value present once in the partition)."""

from __future__ import annotations

import threading
from collections import Counter

from cluster_checks import wait_for

from rillet.client import BlockingConsumer, BlockingProducer
from rillet.client.types import TopicPartition


class AckedTraffic:
    """A producer writing numbered values with acks=all until stopped; what was acked."""

    def __init__(self, bootstrap: str, topic: str, prefix: str) -> None:
        self.topic = topic
        self.prefix = prefix
        self.acked: list[bytes] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(bootstrap,), daemon=True)

    def __enter__(self) -> AckedTraffic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def more(self, count: int, what: str) -> None:
        """Wait until ``count`` more values are acknowledged than now."""
        start = len(self.acked)
        wait_for(what, lambda: len(self.acked) >= start + count, timeout_s=60)

    def _run(self, bootstrap: str) -> None:
        with BlockingProducer(bootstrap, acks="all", linger_ms=5) as producer:
            n = 0
            while not self._stop.is_set():
                batch = [f"{self.prefix}{n + i}".encode() for i in range(20)]
                n += 20
                futures = [(v, producer.send(self.topic, v, partition=0)) for v in batch]
                for v, f in futures:
                    try:
                        f.result(timeout=30)
                        self.acked.append(v)
                    except Exception as exc:
                        self.errors.append(repr(exc))


def read_partition_zero(bootstrap: str, topic: str) -> list[bytes]:
    """Every value in partition 0 of ``topic``, from offset 0 to the end as it is now."""
    tp = TopicPartition(topic, 0)
    with BlockingConsumer(bootstrap) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        end = consumer.end_offsets([tp])[tp]
        values: list[bytes] = []
        wait_for(
            "the whole partition",
            lambda: (
                values.extend(r.value for r in consumer.poll(timeout_ms=200))
                or consumer.position(tp) >= end
            ),
            timeout_s=30,
        )
    return values


def assert_acked_exactly_once(bootstrap: str, topic: str, acked: list[bytes]) -> None:
    values = read_partition_zero(bootstrap, topic)
    counts = Counter(values)
    wrong = [v for v in acked if counts[v] != 1]
    assert not wrong, f"{len(wrong)} acked records lost or doubled, e.g. {wrong[:3]}"
    assert len(acked) > 100
