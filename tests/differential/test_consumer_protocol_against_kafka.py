"""Kafka's consumer group protocol (KIP-848) with Kafka 4.4's own Java consumer, against a real
Kafka broker and rillet: a console consumer with ``group.protocol=consumer`` and then a
classic one join one group and split a 6-partition topic by server-side assignment,
``kafka-consumer-groups --describe --members --verbose`` shows both with their epochs and
assignments (and which one is upgraded), and when the classic one leaves the other takes
every partition. Skipped without Java, Maven or Maven Central (see ``real_kafka``)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from broker_pair import Broker
from test_kafka_tools import CONSUMER, GROUPS, TOPICS, run_tool

PARTITIONS = 6
DEADLINE_S = 60
STOP_TIMEOUT_S = 20


def _java(jars: Path, tool: str, *args: str) -> list[str]:
    return ["java", "-XX:TieredStopAtLevel=1", "-cp", f"{jars}/*", tool, *args]


def _members(jars: Path, bootstrap: str, group: str) -> dict[str, tuple[int, set[int], str]]:
    """Client id -> (member epoch, partitions it owns, upgraded), from ``--describe
    --members --verbose`` (GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS CURRENT-EPOCH
    CURRENT-ASSIGNMENT TARGET-EPOCH TARGET-ASSIGNMENT UPGRADED)."""
    out = run_tool(
        jars, GROUPS, "--bootstrap-server", bootstrap, "--describe", "--group", group,
        "--members", "--verbose",
    )  # fmt: skip
    members = {}
    for line in out.splitlines():
        cols = line.split()
        if len(cols) >= 9 and cols[0] == group:
            parts = cols[6].split(":", 1)[1] if ":" in cols[6] else ""
            upgraded = cols[9] if len(cols) > 9 else ""  # only shown for mixed groups
            # "-" while a member has no epoch yet (a classic member before its first sync)
            epoch = int(cols[5]) if cols[5].lstrip("-").isdigit() else -1
            members[cols[3]] = (epoch, {int(p) for p in parts.split(",") if p}, upgraded)
    return members


Members = dict[str, tuple[int, set[int], str]]


def _until(what: str, jars: Path, bootstrap: str, group: str, sizes: list[int]) -> Members:
    """The group's members once their partition counts are ``sizes`` (sorted)."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        got = _members(jars, bootstrap, group)
        if sorted(len(p) for _, p, _ in got.values()) == sizes:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}: {got}"


def _stop(proc: subprocess.Popen[str]) -> None:
    """SIGTERM (the console consumer leaves its group on the way out), then SIGKILL."""
    proc.terminate()
    try:
        proc.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_a_consumer_protocol_and_a_classic_java_consumer_share_a_group(
    tools: Path, brokers: list[Broker], topic: str
) -> None:
    seen = {}
    for b in brokers:
        server = ("--bootstrap-server", b.bootstrap)
        run_tool(
            tools, TOPICS, *server, "--create", "--topic", topic,
            "--partitions", str(PARTITIONS), "--replication-factor", str(b.replication_factor),
        )  # fmt: skip
        group = f"{topic}-g"
        consumers: dict[str, subprocess.Popen[str]] = {}
        try:
            for name, protocol in (("a", "consumer"), ("b", "classic")):
                if name == "b":  # the group is a consumer-protocol group first
                    _until(f"{b.name}: a alone", tools, b.bootstrap, group, [PARTITIONS])
                args = (
                    "--topic", topic, "--group", group,
                    "--consumer-property", f"group.protocol={protocol}",
                    "--consumer-property", f"client.id={name}",
                    "--timeout-ms", str(DEADLINE_S * 2000),
                )  # fmt: skip
                consumers[name] = subprocess.Popen(
                    _java(tools, CONSUMER, *server, *args),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
            both = _until(f"{b.name}: a and b sharing", tools, b.bootstrap, group, [3, 3])
            assert set(both) == {"a", "b"}, (b.name, both)
            assert both["a"][1] | both["b"][1] == set(range(PARTITIONS)), (b.name, both)
            assert all(epoch > 0 for epoch, _, _ in both.values()), (b.name, both)
            assert (both["a"][2], both["b"][2]) == ("true", "false"), (b.name, both)
            _stop(consumers.pop("b"))
            alone = _until(f"{b.name}: a alone", tools, b.bootstrap, group, [PARTITIONS])
            seen[b.name] = (tuple(sorted(alone)), len(alone["a"][1]))
        finally:
            for proc in consumers.values():
                _stop(proc)
    assert len(set(seen.values())) == 1, seen
