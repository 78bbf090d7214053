"""Which links a partition step cuts, and that healing one partition keeps the links another
partition in force still cuts; in the kernel network mode, which nodes' links go down and
what a degraded link gets. The cluster here is only its plan (node ids): no process is
started; the link proxies and the kernel network are recorders of their calls."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

from rillet.chaos.history import HistoryWriter
from rillet.chaos.kernel_network import KernelNetwork
from rillet.chaos.link_proxy import LinkProxies
from rillet.chaos.nemesis import Active, Nemesis, Partition
from rillet.chaos.schedule import FaultStep
from rillet.launcher.local_cluster import LocalCluster


@dataclass
class _Plan:
    nodes: list[Any]


@dataclass
class _Node:
    node_id: int


@dataclass
class _Cluster:
    plan: _Plan


@dataclass
class _Links:
    blocked: set[tuple[int, int]] = field(default_factory=set)

    def cut(self, pairs: Any) -> None:
        self.blocked |= set(pairs)

    def heal(self, pairs: Any = None) -> None:
        self.blocked -= set(pairs)


def _nemesis(tmp_path: Path, nodes: int, max_down: int) -> tuple[Nemesis, _Links]:
    cluster = _Cluster(_Plan([_Node(i) for i in range(1, nodes + 1)]))
    links = _Links()
    history = HistoryWriter(tmp_path / "history.jsonl")
    nemesis = Nemesis(
        cast(LocalCluster, cluster),
        "t",
        1,
        history,
        max_down,
        links=cast(LinkProxies, links),
        isr_probe=lambda _: None,  # no node answers here
        raft_leader_probe=lambda _: None,
    )
    return nemesis, links


def _step(index: int, mode: str, seed: int = 1) -> FaultStep:
    return FaultStep(
        index, "partition", 1.0, 2.0, "node", node=1, params={"mode": mode, "seed": seed}
    )


def test_isolate_cuts_both_ways_between_the_target_and_the_rest(tmp_path: Path) -> None:
    nemesis, links = _nemesis(tmp_path, 3, 1)
    detail = Partition().apply(nemesis, _step(0, "isolate"), 1)
    assert links.blocked == {(1, 2), (2, 1), (1, 3), (3, 1)}
    assert detail["minority"] == [1]
    Partition().heal(nemesis, Active(_step(0, "isolate"), 1, detail))
    assert links.blocked == set()


def test_one_way_modes_cut_one_direction(tmp_path: Path) -> None:
    nemesis, links = _nemesis(tmp_path, 3, 1)
    Partition().apply(nemesis, _step(0, "one-way-out"), 1)
    assert links.blocked == {(1, 2), (1, 3)}
    nemesis, links = _nemesis(tmp_path, 3, 1)
    Partition().apply(nemesis, _step(0, "one-way-in"), 1)
    assert links.blocked == {(2, 1), (3, 1)}


def test_a_split_on_five_nodes_puts_two_in_the_minority_and_counts_both_down(
    tmp_path: Path,
) -> None:
    nemesis, links = _nemesis(tmp_path, 5, 2)
    step = _step(0, "split", seed=7)
    detail = Partition().apply(nemesis, step, 1)
    minority = detail["minority"]
    assert len(minority) == 2 and minority[0] == 1
    majority = {1, 2, 3, 4, 5} - set(minority)
    assert links.blocked == {(a, b) for a in minority for b in majority} | {
        (b, a) for a in minority for b in majority
    }
    nemesis.active[0] = Active(step, 1, detail)
    assert nemesis.down() == set(minority)


def test_healing_one_partition_keeps_links_another_still_cuts(tmp_path: Path) -> None:
    nemesis, links = _nemesis(tmp_path, 5, 2)
    first = Partition().apply(nemesis, _step(0, "one-way-out"), 1)
    Partition().apply(nemesis, _step(1, "one-way-in"), 2)
    assert (1, 2) in links.blocked
    Partition().heal(nemesis, Active(_step(0, "one-way-out"), 1, first))
    assert (1, 2) in links.blocked  # node 2 still hears nobody
    assert (1, 3) not in links.blocked


@dataclass
class _Kernel:
    """A recorder standing in for KernelNetwork: link-down counts per node."""

    down: dict[int, int] = field(default_factory=dict)
    netem_missing: str | None = None
    degraded: dict[int, tuple[float, int]] = field(default_factory=dict)

    def link_down(self, node: int) -> None:
        self.down[node] = self.down.get(node, 0) + 1

    def link_up(self, node: int) -> None:
        self.down[node] -= 1

    def degrade(self, node: int, loss_pct: float, delay_ms: int) -> None:
        self.degraded[node] = (loss_pct, delay_ms)

    def restore(self, node: int) -> None:
        self.degraded.pop(node, None)


def _kernel_nemesis(tmp_path: Path, nodes: int, max_down: int) -> tuple[Nemesis, _Kernel]:
    cluster = _Cluster(_Plan([_Node(i) for i in range(1, nodes + 1)]))
    kernel = _Kernel()
    nemesis = Nemesis(
        cast(LocalCluster, cluster),
        "t",
        1,
        HistoryWriter(tmp_path / "history.jsonl"),
        max_down,
        kernel=cast(KernelNetwork, kernel),
        isr_probe=lambda _: None,
        raft_leader_probe=lambda _: None,
    )
    return nemesis, kernel


@pytest.mark.parametrize("mode", ["isolate", "one-way-in", "one-way-out"])
def test_kernel_partitions_take_the_minority_s_links_down_whatever_the_mode(
    tmp_path: Path, mode: str
) -> None:
    nemesis, kernel = _kernel_nemesis(tmp_path, 3, 1)
    step = _step(0, mode)
    detail = Partition().apply(nemesis, step, 1)
    assert detail["links_down"] == [1] and detail["mode"] == mode
    assert kernel.down == {1: 1}
    Partition().heal(nemesis, Active(step, 1, detail))
    assert kernel.down == {1: 0}


def test_kernel_split_on_five_nodes_takes_every_minority_link_down(tmp_path: Path) -> None:
    nemesis, kernel = _kernel_nemesis(tmp_path, 5, 2)
    detail = Partition().apply(nemesis, _step(0, "split", seed=7), 1)
    assert sorted(kernel.down) == sorted(detail["minority"]) and len(kernel.down) == 2


def _degrade_step(index: int = 0) -> FaultStep:
    return FaultStep(
        index, "degrade", 1.0, 2.0, "node", node=2, params={"loss_pct": 5.0, "delay_ms": 100}
    )


def test_degrade_applies_loss_and_delay_and_heals(tmp_path: Path) -> None:
    nemesis, kernel = _kernel_nemesis(tmp_path, 3, 1)
    nemesis.cluster.alive = lambda node: True  # type: ignore[method-assign]
    assert nemesis.start(_degrade_step())
    assert kernel.degraded == {2: (5.0, 100)}
    nemesis.heal_all()
    assert kernel.degraded == {}


def test_degrade_is_skipped_with_the_reason_without_netem_or_kernel_mode(
    tmp_path: Path,
) -> None:
    nemesis, kernel = _kernel_nemesis(tmp_path, 3, 1)
    nemesis.cluster.alive = lambda node: True  # type: ignore[method-assign]
    kernel.netem_missing = "this kernel has no netem qdisc (sch_netem)"
    assert not nemesis.start(_degrade_step())
    assert kernel.degraded == {}
    proxy_nemesis, _ = _nemesis(tmp_path, 3, 1)
    proxy_nemesis.cluster.alive = lambda node: True  # type: ignore[method-assign]
    assert not proxy_nemesis.start(_degrade_step(1))
    nemesis.history.close()
    proxy_nemesis.history.close()
    skips = [
        json.loads(line)
        for line in (tmp_path / "history.jsonl").read_text().splitlines()
        if '"skip"' in line
    ]
    reasons = [s["reason"] for s in skips]
    assert any("sch_netem" in r for r in reasons)
    assert any("kernel network mode" in r for r in reasons)
