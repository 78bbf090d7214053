"""Two brokers for the differential suite: a real Apache Kafka 4.x and a 3-node rillet cluster.

Kafka's jars come from Maven Central into ``~/.cache/rillet/kafka-<version>/`` (see
``real_kafka``); when Java, Maven or Maven Central is missing, or the download does not finish
within its limit, every test here is skipped with that reason (never failed). Both brokers
serve the whole session; each test uses its own topics.

The Kafka broker runs with Kafka's defaults except for what a one-node test broker needs and
``auto.create.topics.enable=false``, and so does rillet's cluster: the suite compares the
errors clients see for unknown topics (test_auto_create_against_kafka.py compares topic
auto-creation, on brokers of its own).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from broker_pair import Broker
from real_kafka import TOOLS_ARTIFACT, KafkaUnavailable, RealKafka, ensure_jars

from rillet.launcher.local_cluster import LocalCluster, plan_cluster

KAFKA_PROPERTIES = {"auto.create.topics.enable": "false"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.differential)
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def real_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    try:
        jars = ensure_jars()
    except KafkaUnavailable as exc:
        pytest.skip(f"no real Kafka broker: {exc}")
    work = tmp_path_factory.mktemp("real-kafka")
    with RealKafka(jars, work_dir=work, properties=KAFKA_PROPERTIES) as kafka:
        yield Broker("kafka", kafka.bootstrap, 1, kafka.log_tail)


@pytest.fixture(scope="session")
def rillet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    base = tmp_path_factory.mktemp("rillet-cluster")
    plan = plan_cluster(base, 3, "broker_session_timeout_ms = 3000\n", auto_create_topics=False)
    with LocalCluster(plan) as cluster:
        cluster.start()
        yield Broker(
            "rillet",
            cluster.plan.kafka_bootstrap,
            3,
            lambda: "\n".join(cluster.log_tail(n.node_id, 30) for n in cluster.plan.nodes),
        )


@pytest.fixture(scope="session")
def brokers(real_kafka: Broker, rillet: Broker) -> list[Broker]:
    return [real_kafka, rillet]


@pytest.fixture(scope="session")
def tools() -> Path:
    """The jars of Kafka's command-line tools and its Java clients (skipped, with the reason,
    without them)."""
    try:
        return ensure_jars(artifact=TOOLS_ARTIFACT)
    except KafkaUnavailable as exc:
        pytest.skip(f"no Kafka tools: {exc}")


@pytest.fixture
def topic(request: pytest.FixtureRequest) -> str:
    """A topic name unique to the test (the same name on both brokers)."""
    return f"d-{request.node.name[5:40].replace('[', '-').rstrip(']')}-{os.getpid() % 1000}"
