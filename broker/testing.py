"""A pytest plugin for users' own tests: a real rillet node, started and always stopped.

Installed with rillet (entry point ``pytest11``), so any test can ask for it::

    def test_my_pipeline(rillet_bootstrap: str) -> None:
        producer = BlockingProducer(rillet_bootstrap)
        ...

``rillet_node`` is session-scoped (one node for the whole test run; start-up takes well under a
second); ``rillet_bootstrap`` is its "host:port". Topics persist between tests in one session:
give each test its own topic names. The node's data lives in a temporary directory that is
removed afterwards. When the metadata quorum lands this will start a 3-node cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from rillet.broker.cli.local_node import local_node


@dataclass(frozen=True, slots=True)
class RilletNode:
    bootstrap: str


@pytest.fixture(scope="session")
def rillet_node() -> Iterator[RilletNode]:
    """One real node process on 127.0.0.1 for the test session."""
    with local_node() as bootstrap:
        yield RilletNode(bootstrap)


@pytest.fixture
def rillet_bootstrap(rillet_node: RilletNode) -> str:
    """Bootstrap address ("127.0.0.1:PORT") of the session's node."""
    return rillet_node.bootstrap
