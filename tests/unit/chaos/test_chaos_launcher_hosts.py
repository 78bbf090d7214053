"""The launcher's planning for the kernel network mode: each node on its own address,
configured like a cluster on separate machines, and its argv wrapped to run in its
namespace. Plans only: no process is started."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from rillet.chaos.kernel_network import KernelNetwork
from rillet.launcher.local_cluster import HOST, LocalCluster, load_plan, plan_cluster
from rillet.launcher.local_node import NodeStartError

HOSTS = ["10.231.0.1", "10.231.0.2", "10.231.0.3"]


def test_each_node_listens_everywhere_advertises_its_address_and_binds_raft_to_it(
    tmp_path: Path,
) -> None:
    plan = plan_cluster(tmp_path, 3, hosts=HOSTS)
    assert [n.bootstrap.split(":")[0] for n in plan.nodes] == HOSTS
    for n in plan.nodes:
        config = tomllib.loads((Path(n.work_dir) / "node.toml").read_text())
        assert config["listener"]["host"] == "0.0.0.0"
        assert config["listener"]["advertised_host"] == n.host
        assert config["quorum"]["raft_host"] == n.host
        assert [v["listener"] for v in config["quorum"]["voters"]] == [
            f"{v.host}:{v.port}" for v in plan.nodes
        ]
    assert load_plan(tmp_path) == plan  # cluster.json keeps the hosts


def test_without_hosts_everything_stays_on_loopback(tmp_path: Path) -> None:
    plan = plan_cluster(tmp_path, 2)
    assert {n.host for n in plan.nodes} == {HOST}
    config = tomllib.loads((Path(plan.nodes[0].work_dir) / "node.toml").read_text())
    assert config["listener"]["host"] == HOST and "advertised_host" not in config["listener"]


def test_hosts_must_name_every_node(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="2 hosts for 3 nodes"):
        plan_cluster(tmp_path, 3, hosts=HOSTS[:2])


def test_a_wrapped_node_runs_under_ip_netns_exec_in_its_namespace(tmp_path: Path) -> None:
    net = KernelNetwork([1, 2, 3], run_id="rltest")
    argv = net.wrap(2, ["python", "-m", "rillet.cli.main", "node"])
    assert argv[:4] == ["ip", "netns", "exec", "rltest-n2"] and argv[4] == "python"
    assert net.hosts == HOSTS
    plan = plan_cluster(tmp_path, 3, hosts=net.hosts)
    cluster = LocalCluster(plan, wrap=net.wrap)
    assert cluster.plan.node(3).bootstrap.startswith("10.231.0.3:")


def test_spawn_runs_the_wrapped_argv_and_leaves_the_host_to_the_config(tmp_path: Path) -> None:
    seen: list[list[str]] = []

    def wrap(node_id: int, argv: list[str]) -> list[str]:
        seen.append(argv)
        return [sys.executable, "-c", f"raise SystemExit({40 + node_id})"]

    cluster = LocalCluster(plan_cluster(tmp_path, 1, hosts=HOSTS[:1]), wrap=wrap)
    with cluster, pytest.raises(NodeStartError, match="status 41"):
        cluster.start(timeout_s=30)
    assert "--host" not in seen[0] and "--config" in seen[0]
