"""The clusters bench/kafka_clients.py measures, each started for the run and always stopped.

``rillet-N``: a local rillet cluster of N nodes (its native and Kafka listeners);
``kafka-N``: a real Apache Kafka 4.x cluster of N combined broker+controller processes from
Maven Central's jars (cached outside the repository, see tests/support/real_kafka.py), run
with the JVM options of Kafka's own start script. Topics get replication factor N on both.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio
from _common import REPO, ensure_topic

from rillet.launcher.local_cluster import LocalCluster, plan_cluster

sys.path.insert(0, str(REPO / "tests" / "support"))  # the real Kafka launcher lives there

TOPIC_TIMEOUT_S = 60


@dataclass(frozen=True, slots=True)
class Target:
    name: str  # rillet-3, kafka-1, ...
    nodes: int  # also the replication factor of its topics
    kafka_bootstrap: str
    native_bootstrap: str | None  # rillet's own listener; None for Kafka

    def create_topic(self, topic: str, partitions: int) -> None:
        if self.native_bootstrap is not None:
            trio.run(ensure_topic, self.native_bootstrap, topic, partitions, self.nodes)
            return
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.kafka_bootstrap})
        for future in admin.create_topics([NewTopic(topic, partitions, self.nodes)]).values():
            future.result(TOPIC_TIMEOUT_S)


def parse_target(text: str) -> tuple[str, int]:
    kind, _, nodes = text.partition("-")
    if kind not in ("rillet", "kafka") or not nodes.isdigit() or int(nodes) < 1:
        raise ValueError(f"a target is rillet-N or kafka-N, not {text!r}")
    return kind, int(nodes)


@contextlib.contextmanager
def started(text: str, args: Any = None) -> Iterator[Target]:
    """The target named ``text``; "given" is the cluster of ``--bootstrap`` and
    ``--kafka-bootstrap`` (topics get ``--replication-factor``), left running."""
    if text == "given":
        yield Target(text, args.replication_factor, args.kafka_bootstrap, args.bootstrap)
        return
    kind, nodes = parse_target(text)
    if kind == "rillet":
        with tempfile.TemporaryDirectory(prefix="rillet-bench-") as tmp:
            plan = plan_cluster(Path(tmp), nodes)
            with LocalCluster(plan, log_level="WARNING") as cluster:
                cluster.start()
                print(f"started rillet, {nodes} node(s)", file=sys.stderr)
                yield Target(text, nodes, plan.kafka_bootstrap, plan.bootstrap)
        return
    from real_kafka import ensure_jars
    from real_kafka_cluster import RealKafkaCluster

    with RealKafkaCluster(ensure_jars(), nodes) as kafka:
        print(f"started Apache Kafka, {nodes} node(s)", file=sys.stderr)
        yield Target(text, nodes, kafka.bootstrap, None)
