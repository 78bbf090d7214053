"""Console commands that used to surprise their user (issue 16), run as a user runs them.

``consume --offset`` past the end dumped the partition from the start; ``consume`` and
``perf produce`` carried on quietly (exit 0, or ``nan`` latencies) after their topic was
deleted; ``topics describe`` hung while one partition leader was paused; ``cluster status``
called a cluster of paused nodes "down".
"""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_checks import agreed_state, wait_for
from node_process import NodeProcess

from rillet.client import BlockingAdmin, NewTopic
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = pytest.mark.integration


def argv(bootstrap: str | None, command: str) -> list[str]:
    tail = [] if bootstrap is None else ["--bootstrap", bootstrap]
    return [sys.executable, "-m", "rillet.cli.main", *shlex.split(command), *tail]


def rillet(
    bootstrap: str | None, command: str, stdin: str = "", timeout_s: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv(bootstrap, command),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def started(bootstrap: str, command: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        argv(bootstrap, command),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",  # perf produce writes random bytes, which consume prints as they are
    )


def finished(proc: subprocess.Popen[str], timeout_s: float = 40) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, out, err


def test_consume_at_or_beyond_the_end_offset(node: NodeProcess) -> None:
    b = node.bootstrap
    assert rillet(b, "topics create ends --partitions 1").returncode == 0
    lines = "".join(f"v{i}\n" for i in range(5))
    assert rillet(b, "produce ends --acks all", stdin=lines).returncode == 0

    beyond = rillet(b, "consume ends --partition 0 --offset 999999 --timeout-ms 500")
    assert beyond.returncode == 1 and beyond.stdout == ""
    assert beyond.stderr.strip().splitlines() == [
        "error: offset 999999 is beyond the end of ends-0 (end offset 5)"
    ]
    at_end = rillet(b, "consume ends --partition 0 --offset 5 --timeout-ms 500")
    assert at_end.returncode == 0 and at_end.stdout == ""  # waited at the end, printed nothing
    inside = rillet(b, "consume ends --partition 0 --offset 3 --timeout-ms 500")
    assert inside.returncode == 0 and inside.stdout.split() == ["v3", "v4"]


def test_consume_and_perf_produce_stop_when_their_topic_is_deleted(node: NodeProcess) -> None:
    b = node.bootstrap
    assert rillet(b, "topics create short-lived --partitions 2").returncode == 0
    consume = started(b, "consume short-lived --from-beginning")
    perf = started(
        b,
        "perf produce --topic short-lived --num-records 100000000 --throughput 2000 --acks all",
    )
    try:
        with BlockingAdmin(b) as admin:
            wait_for("records arriving", lambda: "short-lived" in admin.list_topics())
        assert consume.stdout is not None
        consume.stdout.readline()  # the consumer is reading: records were produced
        assert rillet(b, "topics delete short-lived").returncode == 0
        for proc in (consume, perf):
            code, _, err = finished(proc)
            assert code == 1, err
            assert "error: UnknownTopicOrPartitionError: topic 'short-lived' was deleted" in err
            assert "nan" not in err and "Traceback" not in err
    finally:
        for proc in (consume, perf):
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def test_a_record_too_large_for_any_request_fails_at_once(node: NodeProcess) -> None:
    """A record larger than a request may be (here 9 MB > 8 MiB; the report had 120 MB, over
    the node's frame limit) looped on connection resets; it now fails in the client, alone,
    naming the lowest limit it exceeds: the nodes' largest batch (1 MiB + 1 KiB), which
    Metadata answers carry."""
    b = node.bootstrap
    assert rillet(b, "topics create big --partitions 1").returncode == 0
    stdin = "small-1\n" + "x" * 9_000_000 + "\nsmall-2\n"
    result = rillet(b, "produce big --acks all", stdin=stdin, timeout_s=30)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "produced 2 of 3 records to big" in result.stderr
    assert "MessageTooLargeError" in result.stderr and "max_batch_bytes" in result.stderr
    read = rillet(b, "consume big --from-beginning --timeout-ms 500")
    assert read.stdout.split() == ["small-1", "small-2"]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    config = "broker_session_timeout_ms = 60000\n"  # a paused node stays the leader
    with LocalCluster(plan_cluster(tmp_path, 3, config)) as c:
        c.start()
        try:
            yield c
        finally:
            for n in c.plan.nodes:  # resume what a test paused, so the nodes can stop
                if c.alive(n.node_id):
                    c.signal(n.node_id, signal.SIGCONT)


def test_describe_answers_while_a_partition_leader_is_paused(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    wait_for("agreement", lambda: agreed_state(cluster, [1, 2, 3]))
    with BlockingAdmin(cluster.bootstrap) as admin:
        admin.create_topics([NewTopic("spread", 3, replication_factor=1)])
        (spread,) = admin.describe_topics(["spread"])
    leaders = {p.partition: p.leader for p in spread.partitions}
    # Pause a leader that is not the first bootstrap node: the metadata answers, the
    # paused leader's offsets cannot.
    paused = next(leader for leader in leaders.values() if leader != 1)
    cluster.signal(paused, signal.SIGSTOP)
    result = rillet(cluster.bootstrap, "topics describe spread", timeout_s=25)
    assert result.returncode == 0, result.stderr
    rows = {row.split()[1]: row.split() for row in result.stdout.splitlines()[1:4]}
    for partition, leader in leaders.items():
        offsets = rows[str(partition)][-2:]
        assert offsets == (["?", "?"] if leader == paused else ["0", "0"]), rows
    assert f"did not answer within 3s: node(s) {paused}" in result.stderr

    # Every node paused: alive but busy, not "down".
    for n in cluster.plan.nodes:
        if n.node_id != paused:
            cluster.signal(n.node_id, signal.SIGSTOP)
    status = rillet(None, f"cluster status --data-dir {tmp_path}", timeout_s=30)
    assert status.returncode == 1
    assert "running but busy" in status.stdout and "down" not in status.stdout
