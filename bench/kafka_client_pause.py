"""How long a librdkafka producer stalls when its partition leader is paused, per client setting.

A local 3-node rillet cluster with the chaos harness's timeouts (3 s broker sessions and
replica lag), one topic of ``--partitions`` partitions (replication factor 3,
min.insync.replicas 2), and one confluent-kafka idempotent acks=all producer writing
``--rate`` records/s round-robin through the Kafka listener. For each client setting in
``--settings`` (``name=value,...``; ``default`` is confluent-kafka's defaults plus the chaos
harness's own), the leader of partition 0 is SIGSTOPped for ``--pause-s`` seconds, then
resumed; the result is the longest time partition 0 went without an acknowledged write
from the pause on (the other partitions keep writing), and whether every acknowledged record
was read back exactly once.

librdkafka waits for a produce request for ``socket.timeout.ms`` (60 s by default), whatever
``request.timeout.ms`` says (that is the broker's acks=all wait): a paused leader's requests
then stall the partition for the whole pause. A shorter ``socket.timeout.ms`` ends the wait,
librdkafka drops the connection, asks another node for metadata, finds the new leader and
resends with the same sequence numbers (idempotence keeps that exactly-once).

    .venv/bin/python bench/kafka_client_pause.py --settings default "socket.timeout.ms=3000"

Prints one JSON line (bench/_common.py); progress goes to stderr.
"""

from __future__ import annotations

import itertools
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import emit, parser

from rillet.chaos import probes
from rillet.chaos.kafka_clients import producer_config
from rillet.chaos.runner import CLUSTER_CONFIG
from rillet.chaos.workload import ProducerOptions
from rillet.client import BlockingAdmin, NewTopic
from rillet.launcher.local_cluster import LocalCluster, plan_cluster


def parse_setting(text: str) -> dict[str, str]:
    if text == "default":
        return {}
    return dict(item.split("=", 1) for item in text.split(","))


class Writer:
    """A confluent-kafka producer thread recording each acknowledgement's time and value."""

    def __init__(
        self, bootstrap: str, topic: str, rate: float, partitions: int, extra: dict[str, str]
    ) -> None:
        self._topic = topic
        self.acks: dict[int, list[float]] = {p: [] for p in range(partitions)}
        self.values: set[str] = set()
        self.failed = 0
        self._config = {**producer_config("pause", bootstrap, ProducerOptions(rate=rate)), **extra}
        self._interval_s, self._partitions = 1 / rate, partitions
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Writer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(120)

    def _run(self) -> None:
        from confluent_kafka import Producer

        producer = Producer(self._config)
        next_at = time.monotonic()
        for i in itertools.count():
            if self._stop.is_set():
                break
            value = f"v{i}"
            partition = i % self._partitions
            producer.produce(
                self._topic, value.encode(), partition=partition, on_delivery=self._done
            )
            next_at += self._interval_s
            while (delay := next_at - time.monotonic()) > 0:
                producer.poll(min(delay, 0.05))
            producer.poll(0)
        producer.flush(60)

    def _done(self, error: Any, msg: Any) -> None:
        if error is not None:
            self.failed += 1
            return
        self.acks[msg.partition()].append(time.monotonic())
        self.values.add(msg.value().decode())

    def longest_gap_s(self, partition: int, start: float, end: float) -> float:
        times = [start, *sorted(t for t in self.acks[partition] if start <= t <= end)]
        after = [t for t in self.acks[partition] if t > end]
        if after:
            times.append(min(after))
        return max((b - a for a, b in itertools.pairwise(times)), default=end - start)


def leader_of(bootstrap: str, topic: str, partition: int) -> int:
    with BlockingAdmin(bootstrap) as admin:
        (described,) = admin.describe_topics([topic])
    return next(p.leader for p in described.partitions if p.partition == partition)


def read_back(bootstrap: str, topic: str, partitions: int) -> list[str]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "pause-read"})
    try:
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in range(partitions)
        }
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        out: list[str] = []
        deadline = time.monotonic() + 60
        while len(out) < sum(ends.values()) and time.monotonic() < deadline:
            out += [m.value().decode() for m in consumer.consume(1000, 1.0) if m.error() is None]
        return out
    finally:
        consumer.close()


def one(cluster: LocalCluster, topic: str, setting: str, args: Any) -> dict[str, Any]:
    kafka = cluster.plan.kafka_bootstrap
    ids = [n.node_id for n in cluster.plan.nodes]
    if probes.wait_until(lambda: probes.brokers_unfenced(cluster, ids), 240) is None:
        raise RuntimeError("the brokers did not all register in time")
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics([NewTopic(topic, args.partitions, 3, {"min.insync.replicas": "2"})])
    time.sleep(2)  # leaders and ISRs of the new topic settle
    with Writer(kafka, topic, args.rate, args.partitions, parse_setting(setting)) as writer:
        time.sleep(3)
        victim = leader_of(cluster.bootstrap, topic, 0)
        paused_at = time.monotonic()
        cluster.signal(victim, signal.SIGSTOP)
        try:
            time.sleep(args.pause_s)
        finally:
            cluster.signal(victim, signal.SIGCONT)
        resumed_at = time.monotonic()
        time.sleep(args.after_s)
    gap = writer.longest_gap_s(0, paused_at, resumed_at + args.after_s)
    read = read_back(kafka, topic, args.partitions)
    result = {
        "setting": setting,
        "paused_node": victim,
        "pause_s": round(resumed_at - paused_at, 2),
        "partition0_gap_s": round(gap, 2),
        "acknowledged": len(writer.values),
        "failed": writer.failed,
        "lost": len(writer.values - set(read)),
        "duplicated": len(read) - len(set(read)),
    }
    print(result, file=sys.stderr)
    return result


def main() -> int:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--settings", nargs="+", default=["default", "socket.timeout.ms=3000"])
    ap.add_argument("--pause-s", type=float, default=10.0)
    ap.add_argument("--after-s", type=float, default=8.0)
    ap.add_argument("--rate", type=float, default=200.0)
    ap.add_argument("--partitions", type=int, default=3)
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="rillet-pause-") as tmp:
        plan = plan_cluster(Path(tmp), 3, CLUSTER_CONFIG.format(engine="raft"))
        with LocalCluster(plan, log_level="WARNING") as cluster:
            cluster.start(timeout_s=300)
            for i, setting in enumerate(args.settings):
                results.append(one(cluster, f"pause-{i}", setting, args))
    emit("kafka_client_pause", {k: str(v) for k, v in vars(args).items()}, {"runs": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
