"""A node hosting more partitions than a third of its open-file limit.

Each partition kept three descriptors (its log and both indexes): 10,000 partitions ran a
node of a 3-node cluster out of files at this machine's limit of 20,000 (``accept``
returned EMFILE, high-watermark checkpoints failed, the cluster never led the topic). Now a
partition keeps one per segment. Here a node under a limit of 1,200 open files hosts 700
partitions (2,100 descriptors the old way), takes a record in each, restarts cleanly and
serves them all again.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_checks import read_all
from node_process import NodeProcess

from rillet.client import (
    BlockingAdmin,
    BlockingConsumer,
    BlockingProducer,
    NewTopic,
    TopicPartition,
)

pytestmark = pytest.mark.integration

OPEN_FILES = 1_200
PARTITIONS = 700


@pytest.fixture
def limited_node(tmp_path: Path) -> Iterator[NodeProcess]:
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        pytest.skip("prlimit (util-linux) is not installed")
    node = NodeProcess(
        tmp_path / "data",
        tmp_path,
        wrapper=[prlimit, f"--nofile={OPEN_FILES}:{OPEN_FILES}"],
        config_text="[limits]\nmax_connections = 100\n",
    )
    try:
        yield node.start()
    finally:
        node.kill()


def test_a_node_hosts_more_partitions_than_a_third_of_its_open_files(
    limited_node: NodeProcess,
) -> None:
    node = limited_node
    with BlockingAdmin(node.bootstrap) as admin:
        admin.create_topics([NewTopic("wide", PARTITIONS, 1)])
    values = [f"v{i}".encode() for i in range(2 * PARTITIONS)]
    with BlockingProducer(node.bootstrap, acks=-1) as producer:
        sent = [producer.send("wide", v, partition=i % PARTITIONS) for i, v in enumerate(values)]
        assert all(f.result(timeout=30).offset in (0, 1) for f in sent)  # 2 in each
    assert node.terminate() == 0  # a clean shutdown: every index is written
    assert "Too many open files" not in node.log_tail(2000)
    node.start()
    records = read_all(node.bootstrap, "wide", PARTITIONS, len(values))
    assert sorted(r.value for r in records) == sorted(values)
    with BlockingConsumer(node.bootstrap) as consumer:
        ends = consumer.end_offsets([TopicPartition("wide", p) for p in range(PARTITIONS)])
    assert sum(ends.values()) == len(values)
    log = node.log_tail(2000)
    assert "open-file limit 1200" in log and "Too many open files" not in log
