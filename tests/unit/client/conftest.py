"""Fixtures of the client unit tests: a fake cluster of two nodes on loopback TCP."""

from __future__ import annotations

import pytest
import trio
from client_fakes import FakeCluster


@pytest.fixture
async def cluster(nursery: trio.Nursery) -> FakeCluster:
    fake = FakeCluster(num_nodes=2)
    await fake.start(nursery)
    return fake
