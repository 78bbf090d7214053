"""A node that stops on an injected disk error after the fault's heal (it was still
stopping when the heal looked) is restarted without counting a crash; any other exit is
still a crash. The cluster here is a recorder: no process is started."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from rillet.chaos.history import HistoryWriter
from rillet.chaos.nemesis import Nemesis
from rillet.chaos.power_faults import stopped_by_disk_fault
from rillet.launcher.local_cluster import LocalCluster

DISK_LINE = (
    "2026-11-29 13:12:14,691 ERROR rillet.cli.node_command: data_dir /d is not usable "
    "(/d/chaos-2/00000000000000000000.log): No space left on device (injected)"
)
EARLIER = "2026-11-29 13:12:14,507 ERROR rillet.broker.replica.clean_close: closing chaos-2 failed"


@dataclass
class _Node:
    node_id: int


@dataclass
class _Cluster:
    status: int
    tail: str
    plan: Any = None
    spawned: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.plan = type("Plan", (), {"nodes": [_Node(1), _Node(2), _Node(3)]})()

    def alive(self, node: int) -> bool:
        return node != 2 or bool(self.spawned)

    def stop(self, node: int) -> int:
        return self.status

    def log_tail(self, node: int, lines: int) -> str:
        return self.tail

    def spawn(self, node: int) -> None:
        self.spawned.append(node)

    def wait_ready(self, nodes: list[int], timeout_s: float) -> None:
        return None


def _check(tmp_path: Path, status: int, tail: str) -> tuple[Nemesis, _Cluster, list[str]]:
    cluster = _Cluster(status, tail)
    history = HistoryWriter(tmp_path / "history.jsonl")
    nemesis = Nemesis(
        cast(LocalCluster, cluster),
        "t",
        1,
        history,
        1,
        isr_probe=lambda _: None,
        raft_leader_probe=lambda _: None,
    )
    assert nemesis.check_crashes() == [2]
    history.close()
    lines = (tmp_path / "history.jsonl").read_text().splitlines()
    return nemesis, cluster, [json.loads(line)["type"] for line in lines]


def test_an_exit_on_an_injected_disk_error_is_restarted_not_counted(tmp_path: Path) -> None:
    nemesis, cluster, types = _check(tmp_path, 2, f"{EARLIER}\n{DISK_LINE}")
    assert nemesis.crashes == {}
    assert "crash" not in types and "disk-stop" in types
    assert cluster.spawned == [2]


def test_any_other_exit_is_a_crash(tmp_path: Path) -> None:
    nemesis, cluster, types = _check(tmp_path, 1, DISK_LINE)
    assert nemesis.crashes == {2: 1}
    assert "crash" in types
    assert cluster.spawned == [2]


def test_only_the_node_commands_last_line_decides() -> None:
    assert stopped_by_disk_fault(2, DISK_LINE)
    assert not stopped_by_disk_fault(-12, DISK_LINE)  # killed: not the node's own stop
    injected_earlier = f"{DISK_LINE}\n2026-11-29 ERROR rillet.cli.node_command: node stopped: x"
    assert not stopped_by_disk_fault(2, injected_earlier)
    assert not stopped_by_disk_fault(2, EARLIER)
