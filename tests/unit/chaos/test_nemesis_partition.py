"""Which links a partition step cuts, and that healing one partition keeps the links another
partition in force still cuts. The cluster here is only its plan (node ids): no process is
started; the link proxies are a recorder of cut/heal calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from rillet.chaos.history import HistoryWriter
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
