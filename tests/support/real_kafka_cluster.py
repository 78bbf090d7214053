"""A real Apache Kafka 4.x cluster of several KRaft processes on 127.0.0.1 (benchmarks).

Every process is both broker and controller (a combined-mode cluster, like rillet's nodes);
they share one cluster id and voter list, start together (none serves before the quorum
has a leader) and are all stopped at the end, even when one fails to start. Internal topics
and new topics get replication factor ``nodes`` unless ``properties`` say otherwise.
Standard library only.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from real_kafka import HOST, RealKafka, free_port, kafka_cluster_id


class RealKafkaCluster:
    """``nodes`` KRaft processes; use as a context manager."""

    def __init__(
        self,
        jars: Path,
        nodes: int = 3,
        work_dir: Path | None = None,
        properties: dict[str, str] | None = None,
        jvm: str = "bench",
        log_level: str = "INFO",  # the "started" line the wait looks for is INFO
    ) -> None:
        self._own_dir = work_dir is None
        self.work_dir = work_dir or Path(tempfile.mkdtemp(prefix="rillet-real-kafka-cluster-"))
        ports = [(free_port(), free_port()) for _ in range(nodes)]
        voters = ",".join(f"{i + 1}@{HOST}:{c}" for i, (_, c) in enumerate(ports))
        replicated = {
            "default.replication.factor": str(nodes),
            "offsets.topic.replication.factor": str(nodes),
            "transaction.state.log.replication.factor": str(nodes),
            "share.coordinator.state.topic.replication.factor": str(nodes),
        }
        cluster_id = kafka_cluster_id()
        self.members = [
            RealKafka(
                jars,
                self.work_dir / f"node-{i + 1}",
                log_level=log_level,
                properties={**replicated, **(properties or {})},
                jvm=jvm,
                node_id=i + 1,
                ports=ports[i],
                voters=voters,
                cluster_id=cluster_id,
            )
            for i in range(nodes)
        ]

    @property
    def bootstrap(self) -> str:
        return ",".join(m.bootstrap for m in self.members)

    def __enter__(self) -> RealKafkaCluster:
        try:
            for member in self.members:
                member.launch()
            for member in self.members:
                member.wait_started()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        for member in self.members:
            member.stop()
        if self._own_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)
