"""Consumer groups on a real 3-node cluster, with member processes that can be SIGKILLed.

Each member (tests/support/group_member.py) appends every record it receives to its own file
the moment it gets it; the test reads those files to check coverage, overlap and
duplicates. The LocalCluster context and the ``members`` fixture stop every process, also
when a test fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_checks import FAST_ELECTIONS, agreed_state, produce_all, raft_leader, wait_for

from rillet.client import BlockingAdmin, NewTopic, TopicPartition
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = pytest.mark.integration

MEMBER = Path(__file__).resolve().parent.parent / "support" / "group_member.py"
TOPIC, PARTITIONS, GROUP = "orders", 12, "billing"
SESSION_MS = 3000
CONFIG = FAST_ELECTIONS + "broker_session_timeout_ms = 2000\n"


class Members:
    def __init__(self, base: Path, bootstrap: str) -> None:
        self.base, self.bootstrap = base, bootstrap
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str) -> None:
        out = self.base / f"{name}.jsonl"
        self.procs[name] = subprocess.Popen(
            [sys.executable, str(MEMBER), self.bootstrap, GROUP, TOPIC, str(out), str(SESSION_MS)],
            stdout=subprocess.DEVNULL,
            stderr=open(self.base / f"{name}.err", "wb"),  # noqa: SIM115 - lives with the process
        )

    def kill(self, name: str) -> None:
        self.procs[name].kill()
        self.procs[name].wait(10)

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)

    def diagnosis(self) -> str:
        """Which members still run, and the last lines each wrote to stderr."""
        lines = []
        for name, proc in self.procs.items():
            err = self.base / f"{name}.err"
            tail = err.read_text(errors="replace").splitlines()[-3:] if err.exists() else []
            state = "running" if proc.poll() is None else f"exited {proc.returncode}"
            lines.append(f"member {name}: {state}; " + " | ".join(tail))
        return "\n".join(lines)

    def received(self) -> dict[str, list[tuple[int, int, str]]]:
        out: dict[str, list[tuple[int, int, str]]] = {}
        for name in self.procs:
            path = self.base / f"{name}.jsonl"
            lines = path.read_text().splitlines() if path.exists() else []
            rows = []
            for line in lines:
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut by SIGKILL
                rows.append((r["p"], r["o"], r["v"]))
            out[name] = rows
        return out


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(plan_cluster(tmp_path / "cluster", 3, CONFIG)) as c:
        c.start()
        yield c


@pytest.fixture
def members(tmp_path: Path, cluster: LocalCluster) -> Iterator[Members]:
    m = Members(tmp_path, cluster.bootstrap)
    try:
        yield m
    finally:
        m.stop_all()


def describe(bootstrap: str) -> Any:
    with BlockingAdmin(bootstrap) as admin:
        return admin.describe_group(GROUP)


def settled(bootstrap: str, count: int) -> dict[str, set[int]] | None:
    """Each member's owned partitions once ``count`` members own all partitions, disjointly."""
    try:
        group = describe(bootstrap)
    except Exception:
        return None
    if len(group.members) != count:
        return None
    owned = {m.member_id: {p for tp in m.owned for p in tp.partitions} for m in group.members}
    targets = {m.member_id: {p for tp in m.target for p in tp.partitions} for m in group.members}
    if owned != targets or set().union(*owned.values()) != set(range(PARTITIONS)):
        return None
    assert sum(len(o) for o in owned.values()) == PARTITIONS, "a partition with two owners"
    return owned


def wait_settled(
    what: str, bootstrap: str, members: Members, count: int, timeout_s: float = 30
) -> dict[str, set[int]]:
    """``settled`` within ``timeout_s``; a timeout says what the group and members looked
    like (CI is where these waits time out, and only its output is left to read)."""
    try:
        return wait_for(what, lambda: settled(bootstrap, count), timeout_s)
    except AssertionError as exc:
        try:
            group: Any = describe(bootstrap)
        except Exception as describe_error:  # part of the report only
            group = describe_error
        raise AssertionError(f"{exc}\ngroup: {group}\n{members.diagnosis()}") from None


def setup_topic(cluster: LocalCluster, count: int) -> dict[bytes, tuple[int, int]]:
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, replication_factor=3)])
    wait_for("agreement", lambda: agreed_state(cluster, [1, 2, 3]))
    return produce_all(cluster.bootstrap, TOPIC, [f"r{i}".encode() for i in range(count)])


def delivered(members: Members) -> list[tuple[int, int, str]]:
    return [row for rows in members.received().values() for row in rows]


def test_three_members_share_the_partitions_and_receive_every_record(
    cluster: LocalCluster, members: Members
) -> None:
    acked = setup_topic(cluster, 3000)
    for name in ("a", "b", "c"):
        members.start(name)
    owned = wait_settled("three members to share the topic", cluster.bootstrap, members, 3)
    assert sorted(len(p) for p in owned.values()) == [4, 4, 4]
    wait_for("every record", lambda: len({r[2] for r in delivered(members)}) >= len(acked), 30)
    rows = delivered(members)
    assert {r[2].encode() for r in rows} == set(acked)
    assert len(rows) == len(acked), "a record delivered twice without any failure"


def test_a_killed_member_s_partitions_move_and_resume_from_committed_offsets(
    cluster: LocalCluster, members: Members
) -> None:
    acked = setup_topic(cluster, 3000)
    for name in ("a", "b", "c"):
        members.start(name)
    wait_settled("a settled group", cluster.bootstrap, members, 3)
    wait_for("the first records", lambda: len(delivered(members)) >= 3000, 30)
    members.kill("a")
    killed_at = time.monotonic()
    # Read once it is dead: until then it may still write records of another partition.
    victim_partitions = {r[0] for r in members.received()["a"]}
    more = produce_all(cluster.bootstrap, TOPIC, [f"s{i}".encode() for i in range(3000)])
    wait_settled("two members to take over", cluster.bootstrap, members, 2)
    moved_s = time.monotonic() - killed_at
    print(f"rebalance after SIGKILL: {moved_s * 1000:.0f} ms (session {SESSION_MS} ms)")
    everything = set(acked) | set(more)
    wait_for(
        "every record after the kill",
        lambda: {r[2].encode() for r in delivered(members)} >= everything,
        30,
    )
    rows = delivered(members)
    seen: dict[str, int] = {}
    for r in rows:
        seen[r[2]] = seen.get(r[2], 0) + 1
    duplicates = {v for v, n in seen.items() if n > 1}
    print(f"{len(duplicates)} duplicates, all from the killed member's uncommitted window")
    dup_partitions = {r[0] for r in rows if r[2] in duplicates}
    assert dup_partitions <= victim_partitions


def test_the_group_converges_when_the_raft_leader_dies_mid_rebalance(
    cluster: LocalCluster, members: Members
) -> None:
    setup_topic(cluster, 2000)
    for name in ("a", "b"):
        members.start(name)
    wait_settled("a settled group", cluster.bootstrap, members, 2)
    wait_for("records flowing", lambda: len(delivered(members)) >= 2000, 30)
    committed_before = wait_for("commits", lambda: group_offsets(cluster.bootstrap) or None, 10)
    leader = raft_leader(cluster)
    assert leader is not None
    members.start("c")  # a rebalance starts...
    cluster.kill(leader)  # ...and the controller dies in the middle of it
    survivors = ",".join(cluster.plan.node(i).bootstrap for i in (1, 2, 3) if i != leader)
    wait_settled("the group to converge", survivors, members, 3, 40)
    committed_after = group_offsets(survivors)
    for tp, offset in committed_before.items():
        assert committed_after.get(tp, -1) >= offset, f"{tp} went back"


def group_offsets(bootstrap: str) -> dict[TopicPartition, int]:
    with BlockingAdmin(bootstrap) as admin:
        return {tp: o for tp, o in admin.group_offsets(GROUP).items() if o >= 0}


def rillet(cluster: LocalCluster, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rillet.cli.main", *argv, "--bootstrap", cluster.bootstrap],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_groups_cli_lists_describes_and_resets_only_an_idle_group(
    cluster: LocalCluster, members: Members
) -> None:
    setup_topic(cluster, 1200)
    members.start("a")
    wait_settled("the member to own everything", cluster.bootstrap, members, 1)
    wait_for("commits", lambda: sum(group_offsets(cluster.bootstrap).values()) >= 1200, 30)
    listed = rillet(cluster, "groups", "list")
    assert listed.returncode == 0 and GROUP in listed.stdout
    described = rillet(cluster, "groups", "describe", GROUP)
    assert described.returncode == 0, described.stderr
    lines = [line.split() for line in described.stdout.splitlines() if line.startswith(TOPIC)]
    assert len(lines) == PARTITIONS and all(line[4] == "0" for line in lines)  # no lag
    refused = rillet(cluster, "groups", "reset-offsets", GROUP, "--to-earliest", "--execute")
    assert refused.returncode == 1 and "active members" in refused.stdout
    kept = rillet(cluster, "groups", "delete-offsets", GROUP, "--topic", TOPIC, "--partition", "3")
    assert kept.returncode == 1 and "GroupSubscribedToTopicError" in kept.stderr, kept.stderr
    assert "Traceback" not in kept.stderr
    members.kill("a")
    wait_for("the member to expire", lambda: not describe(cluster.bootstrap).members, 30)
    plan = rillet(cluster, "groups", "reset-offsets", GROUP, "--to-earliest")
    assert plan.returncode == 0 and "dry run" in plan.stdout
    assert sum(group_offsets(cluster.bootstrap).values()) >= 1200  # unchanged
    done = rillet(cluster, "groups", "reset-offsets", GROUP, "--to-earliest", "--execute")
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(group_offsets(cluster.bootstrap).values()) == {0}
    # Nobody reads the topic now: its offsets may go, one partition or all of them.
    one = rillet(cluster, "groups", "delete-offsets", GROUP, "--topic", TOPIC, "--partition", "3")
    assert one.returncode == 0 and f"{TOPIC}-3 for group {GROUP}" in one.stdout, one.stderr
    assert TopicPartition(TOPIC, 3) not in group_offsets(cluster.bootstrap)
    every = rillet(cluster, "groups", "delete-offsets", GROUP, "--topic", TOPIC)
    assert every.returncode == 0 and len(every.stdout.splitlines()) == PARTITIONS, every.stderr
    assert group_offsets(cluster.bootstrap) == {}
