"""A member that closes while the controller dies still leaves the group (issue 16).

With repeated controller changes, a member that left while no controller answered stayed
registered until its session expired, and its partitions went unconsumed. Its final commit
and LeaveGroup are now retried until a new controller takes them (within the close
timeout). The member's session here is 60 s: only its leave can empty the group sooner.
While it closes, the controller is killed and one other voter is paused, so no controller
exists for 5 s.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_checks import FAST_ELECTIONS, agreed_state, produce_all, raft_leader, wait_for

from rillet.client import BlockingAdmin, NewTopic
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = pytest.mark.integration

MEMBER = Path(__file__).resolve().parent.parent / "support" / "group_member.py"
TOPIC, GROUP, PARTITIONS, RECORDS = "closing", "leavers", 3, 300
SESSION = "60000"  # the member's session_timeout_ms
NO_CONTROLLER_S = 5.0  # how long no controller can be elected while the member closes
LEAVE_WITHIN_S = 30.0  # a new controller is elected in a few seconds; the session is 60 s
CONFIG = FAST_ELECTIONS + "broker_session_timeout_ms = 2000\n"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(plan_cluster(tmp_path / "cluster", 3, CONFIG)) as c:
        c.start()
        yield c


def group_of(bootstrap: str) -> Any:
    try:
        with BlockingAdmin(bootstrap, request_timeout_ms=3000) as admin:
            return admin.describe_group(GROUP)
    except Exception:  # no controller yet: ask again
        return None


def test_a_member_closing_while_the_controller_dies_leaves_the_group(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, replication_factor=3)])
    wait_for("agreement", lambda: agreed_state(cluster, [1, 2, 3]))
    produce_all(cluster.bootstrap, TOPIC, [f"r{i}".encode() for i in range(RECORDS)])
    out = tmp_path / "member.jsonl"
    member = subprocess.Popen(
        [sys.executable, str(MEMBER), cluster.bootstrap, GROUP, TOPIC, str(out), SESSION],
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "member.err", "wb"),  # noqa: SIM115 - lives with the process
    )
    try:
        wait_for(
            "the member to own every partition",
            lambda: (
                (g := group_of(cluster.bootstrap)) is not None
                and len(g.members) == 1
                and sum(len(tp.partitions) for tp in g.members[0].owned) == PARTITIONS
            ),
            30,
        )
        wait_for(
            "every record", lambda: out.exists() and len(out.read_text().splitlines()) >= RECORDS
        )
        controller = wait_for("a controller", lambda: raft_leader(cluster))
        others = [i for i in (1, 2, 3) if i != controller]
        survivors = ",".join(cluster.plan.node(i).bootstrap for i in others)
        # No quorum for a while: one survivor is stopped, so no new controller is elected.
        cluster.signal(others[0], signal.SIGSTOP)
        try:
            cluster.kill(controller)
            killed_at = time.monotonic()
            member.send_signal(signal.SIGTERM)  # close: commit and leave, with no controller
            with contextlib.suppress(subprocess.TimeoutExpired):
                member.wait(NO_CONTROLLER_S)  # it keeps trying (before the fix: it gave up)
        finally:
            cluster.signal(others[0], signal.SIGCONT)
        member.wait(60)
        exited_s = time.monotonic() - killed_at
        left = wait_for(
            "the member to leave",
            lambda: (g := group_of(survivors)) is not None and not g.members and g,
            LEAVE_WITHIN_S,
        )
        left_s = time.monotonic() - killed_at
    finally:
        if member.poll() is None:
            member.kill()
            member.wait(10)
    print(
        f"controller {controller} killed, node {others[0]} paused for {NO_CONTROLLER_S}s; "
        f"member closed after {exited_s:.2f}s, "
        f"group empty after {left_s:.2f}s"
    )
    assert not left.members
    assert member.returncode == 0
    with BlockingAdmin(survivors) as admin:
        committed = admin.group_offsets(GROUP)
    assert sum(committed.values()) == RECORDS  # every position was committed
