"""kill-two and kill-all: opt-in kinds drawn only when the budget allows a majority down;
the nemesis kills the drawn node and further live ones, records them as the fault's
minority, and restarts them all at the heal. The cluster is a recorder of its calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

from rillet.chaos.history import HistoryWriter
from rillet.chaos.nemesis import Nemesis
from rillet.chaos.schedule import DEFAULT_FAULTS, build_schedule
from rillet.launcher.local_cluster import LocalCluster


@dataclass
class _Node:
    node_id: int


@dataclass
class _Plan:
    nodes: list[_Node]


@dataclass
class _Cluster:
    plan: _Plan
    down: set[int] = field(default_factory=set)
    calls: list[tuple[str, Any]] = field(default_factory=list)

    def alive(self, node: int) -> bool:
        return node not in self.down

    def kill(self, node: int) -> None:
        self.down.add(node)
        self.calls.append(("kill", node))

    def spawn(self, node: int) -> None:
        self.down.discard(node)
        self.calls.append(("spawn", node))

    def wait_ready(self, nodes: list[int], timeout_s: float) -> None:
        self.calls.append(("wait_ready", sorted(nodes)))


def test_majority_kills_are_opt_in_and_need_the_budget() -> None:
    assert "kill-two" not in DEFAULT_FAULTS and "kill-all" not in DEFAULT_FAULTS
    assert build_schedule(1, ("kill-two",), 60, 3, 6).steps == []  # a minority budget
    with pytest.raises(ValueError, match="allow_majority"):
        build_schedule(1, ("kill-two",), 60, 3, 6, max_down=2)
    steps = build_schedule(1, ("kill-two", "kill-all"), 60, 3, 6, max_down=3, allow_majority=True)
    assert {s.kind for s in steps.steps} == {"kill-two", "kill-all"}
    for a, b in zip(steps.steps, steps.steps[1:], strict=False):
        assert b.start_s > a.heal_s  # the whole cluster's budget: never two at once


@pytest.mark.parametrize(("kind", "killed"), [("kill-two", 2), ("kill-all", 3)])
def test_the_nemesis_kills_and_restarts_them_all(tmp_path: Path, kind: str, killed: int) -> None:
    cluster = _Cluster(_Plan([_Node(i) for i in (1, 2, 3)]))
    history = HistoryWriter(tmp_path / "history.jsonl")
    nemesis = Nemesis(
        cast(LocalCluster, cluster),
        "t",
        1,
        history,
        3,
        isr_probe=lambda _: None,
        raft_leader_probe=lambda _: None,
    )
    schedule = build_schedule(3, (kind,), 30, 3, 1, max_down=3, allow_majority=True)
    step = schedule.steps[0]
    assert nemesis.start(step)
    assert len(cluster.down) == killed and step.node in cluster.down
    assert nemesis.down() == cluster.down
    nemesis.heal(step)
    history.close()
    assert cluster.down == set()
    assert cluster.calls[-1] == (
        "wait_ready",
        sorted({c[1] for c in cluster.calls if c[0] == "kill"}),
    )
