"""A pytest plugin for users' own tests: a real rillet cluster, started and always stopped.

Installed with rillet (entry point ``pytest11``), so any test can ask for it::

    def test_my_pipeline(rillet_bootstrap: str) -> None:
        producer = BlockingProducer(rillet_bootstrap)
        ...

``rillet_cluster`` is session-scoped: three real node processes on 127.0.0.1 (Raft voters
that are also brokers, like ``rillet cluster up``), started once for the test run (about a
second) and stopped at its end, whatever happens. ``rillet_bootstrap`` is its bootstrap list.
``rillet_node`` is a single-node variant for tests that want the smallest footprint. Topics
persist between tests in one session: give each test its own topic names. Data lives in
temporary directories that are removed afterwards.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rillet.launcher.local_cluster import LocalCluster, plan_cluster
from rillet.launcher.local_node import local_node


@dataclass(frozen=True, slots=True)
class RilletNode:
    bootstrap: str


@pytest.fixture(scope="session")
def rillet_cluster() -> Iterator[LocalCluster]:
    """A 3-node cluster for the test session; its ``bootstrap`` lists all three nodes."""
    with (
        tempfile.TemporaryDirectory(prefix="rillet-cluster-") as tmp,
        LocalCluster(plan_cluster(Path(tmp), 3)) as cluster,
    ):
        cluster.start()
        yield cluster
        cluster.stop_all()


@pytest.fixture
def rillet_bootstrap(rillet_cluster: LocalCluster) -> str:
    """Bootstrap servers ("127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3") of the session's cluster."""
    return rillet_cluster.bootstrap


@pytest.fixture(scope="session")
def rillet_node() -> Iterator[RilletNode]:
    """One real single-node cluster on 127.0.0.1 for the test session."""
    with local_node() as bootstrap:
        yield RilletNode(bootstrap)
