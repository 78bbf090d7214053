"""Fixtures for integration tests against real node processes on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from node_process import NodeProcess


@pytest.fixture
def node_factory(tmp_path: Path) -> Iterator[Callable[..., NodeProcess]]:
    nodes: list[NodeProcess] = []

    def make(config_text: str | None = None, name: str = "node") -> NodeProcess:
        base = tmp_path / f"{name}{len(nodes)}"
        (base / "logs").mkdir(parents=True)
        node = NodeProcess(base / "data", base / "logs", config_text=config_text)
        nodes.append(node)
        return node

    try:
        yield make
    finally:
        for node in nodes:
            node.kill()


@pytest.fixture
def node(node_factory: Callable[..., NodeProcess]) -> NodeProcess:
    return node_factory().start()
