"""``cluster status`` helpers: partition health from metadata and the no-answer lines."""

from __future__ import annotations

import pytest

from rillet.cli import cluster_status
from rillet.cli.cluster_status import (
    BUSY,
    REFUSED,
    NodeProbe,
    PartitionHealth,
    best_view,
    listed,
    no_answer_line,
    print_brokers_and_partitions,
)
from rillet.cli.main import build_parser
from rillet.client.errors import ClusterAuthorizationFailedError
from rillet.client.types import PartitionInfo, TopicDescription
from rillet.wire.cluster_messages import BrokerStatus, DescribeQuorumResponse


def view(node_id: int, leader: int, applied: int, fenced: bool = False) -> DescribeQuorumResponse:
    brokers = [BrokerStatus(1, "h", 1, 5, fenced), BrokerStatus(2, "h", 2, 6, False)]
    return DescribeQuorumResponse(0, node_id, leader, 3, [1, 2], applied, brokers, 1, 2, [])


def test_partition_health_finds_under_replicated_and_leaderless() -> None:
    topic = TopicDescription(
        "t",
        [
            PartitionInfo(0, 1, 0, [1, 2, 3], [1, 2, 3]),
            PartitionInfo(1, 2, 0, [1, 2, 3], [2]),
            PartitionInfo(2, -1, 0, [1, 2], []),
        ],
        {},
    )
    health = PartitionHealth.of([topic])
    assert health.under_replicated == ["t-1", "t-2"]
    assert health.unavailable == ["t-2"]


def test_best_view_prefers_a_known_leader_then_the_furthest_applied() -> None:
    assert best_view([view(1, -1, 99), view(2, 1, 5), view(3, 1, 7)]).node_id == 3


def test_long_lists_are_cut() -> None:
    names = [f"t-{i}" for i in range(25)]
    assert listed(names).endswith("t-19 and 5 more")
    assert listed(["a-0"]) == "a-0"


def test_brokers_and_partitions_lines(capsys: pytest.CaptureFixture[str]) -> None:
    print_brokers_and_partitions(view(1, 1, 3, fenced=True), PartitionHealth(["t-1"], []))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "brokers: 2, fenced: 1"
    assert out[1] == "  1: h:1 epoch 5 fenced"
    assert "topics: 1, partitions: 2, under-replicated: 1" in out
    assert out[-1] == "under-replicated partitions: t-1"
    print_brokers_and_partitions(view(1, 1, 3), None)
    assert "under-replicated: unknown" in capsys.readouterr().out


def test_no_answer_lines_for_addresses() -> None:
    refused = {"h:1": NodeProbe(None, REFUSED)}
    assert no_answer_line(refused, {}) == (
        "no node reachable (connections refused): the cluster is down"
    )
    busy = {"h:1": NodeProbe(None, BUSY), "h:2": NodeProbe(None, REFUSED)}
    line = no_answer_line(busy, {})
    assert "node(s) h:1 accepted the connection: 1 node(s) are running but busy" in line


def test_status_takes_bootstrap_and_falls_back_to_the_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    args = build_parser().parse_args(["cluster", "status", "--bootstrap", "h:1,h:2"])
    assert args.bootstrap == "h:1,h:2"
    called: list[str] = []
    monkeypatch.setattr(
        "rillet.cli.cluster_command.run_remote_status", lambda b, s: called.append(b) or 0
    )
    monkeypatch.setenv("RILLET_BOOTSTRAP", "env:9")
    args = build_parser().parse_args(["cluster", "status", "--data-dir", str(tmp_path)])
    assert args.run(args) == 0
    assert called == ["env:9"]


def test_status_without_cluster_or_bootstrap_says_what_to_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    monkeypatch.delenv("RILLET_BOOTSTRAP", raising=False)
    args = build_parser().parse_args(["cluster", "status", "--data-dir", str(tmp_path)])
    assert args.run(args) == 1
    assert "or give --bootstrap" in capsys.readouterr().err


def test_unreachable_bootstrap_is_down_not_busy(capsys: pytest.CaptureFixture[str]) -> None:
    assert cluster_status.run_remote_status("127.0.0.1:1") == 1
    assert "no node reachable" in capsys.readouterr().out


class RefusingConnection:
    """A node that is up but refuses this client: no ACL allows its DescribeQuorum."""

    def __init__(self, host: str, port: int, **options: object) -> None:
        self.options = options

    async def connect(self, nursery: object, timeout_s: float) -> None:
        return None

    async def request(self, request: object, timeout_s: float) -> object:
        raise ClusterAuthorizationFailedError("User:CN=nobody may not DESCRIBE cluster 'kafka'")

    def close(self) -> None:
        return None


def test_a_refusing_cluster_is_not_authorized_not_down(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cluster_status, "BrokerConnection", RefusingConnection)
    assert cluster_status.run_remote_status("127.0.0.1:1") == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    assert out.startswith("not authorized: User:CN=nobody may not DESCRIBE cluster")
    assert "down" not in out
