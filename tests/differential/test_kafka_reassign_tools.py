"""Kafka's ``kafka-reassign-partitions`` (generate, execute, verify) and
``kafka-leader-election --election-type preferred``, unchanged, against rillet and a real
Kafka 4.4 broker: the same steps give the same outcome on both.

The plan is generated over all of each side's brokers (Kafka's one broker, rillet's three),
executed, and verified until every partition says "is completed" (verify also clears the
replication throttles, which must succeed); the preferred election then finds every
preferred replica leading. The tools' output is compared with broker ids and paths masked.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from broker_pair import Broker
from test_kafka_tools import TOPICS, run_tool

# About 70 s of tool runs (a JVM each): outside the default run (docs/reassignment.md).
pytestmark = pytest.mark.skipif(
    os.environ.get("RILLET_REASSIGNMENT_TESTS") != "1",
    reason="about 70 s: run with RILLET_REASSIGNMENT_TESTS=1",
)
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
ELECTION = "org.apache.kafka.tools.LeaderElectionCommand"
PARTITIONS = 3
VERIFY_TIMEOUT_S = 60


def masked(text: str) -> str:
    """Output with what differs by design (broker ids, data directories) masked."""
    text = re.sub(r'"log_dirs":\[[^\]]*\]', '"log_dirs":[...]', text)
    text = re.sub(r"on brokers? [\d,]+", "on brokers N", text)
    return re.sub(r'"replicas":\[[\d,]*\]', '"replicas":[...]', text)


def reassign_and_elect(tools: Path, b: Broker, topic: str, work: Path) -> dict[str, object]:
    server = ("--bootstrap-server", b.bootstrap)
    factor = str(b.replication_factor)
    run_tool(tools, TOPICS, *server, "--create", "--topic", topic, "--partitions", "3",
             "--replication-factor", factor)  # fmt: skip
    brokers = ",".join(str(n) for n in range(1, b.replication_factor + 1))
    topics_file = work / f"{b.name}-topics.json"
    topics_file.write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    generated = run_tool(tools, REASSIGN, *server, "--generate", "--topics-to-move-json-file",
                         str(topics_file), "--broker-list", brokers)  # fmt: skip
    proposed = json.loads(generated.strip().splitlines()[-1])
    assert len(proposed["partitions"]) == PARTITIONS, generated
    assert all(len(p["replicas"]) == b.replication_factor for p in proposed["partitions"])
    plan = work / f"{b.name}-plan.json"
    plan.write_text(json.dumps(proposed))
    executed = run_tool(
        tools, REASSIGN, *server, "--execute", "--reassignment-json-file", str(plan)
    )
    deadline = time.monotonic() + VERIFY_TIMEOUT_S
    while True:
        verified = run_tool(
            tools, REASSIGN, *server, "--verify", "--reassignment-json-file", str(plan)
        )
        if verified.count("is completed") == PARTITIONS or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert verified.count("is completed") == PARTITIONS, (b.name, verified)
    described = run_tool(tools, TOPICS, *server, "--describe", "--topic", topic)
    placed = {
        int(m.group(1)): [int(r) for r in m.group(2).split(",")]
        for m in re.finditer(r"Partition: (\d+)\s+Leader: \S+\s+Replicas: ([\d,]+)", described)
    }
    assert placed == {p["partition"]: p["replicas"] for p in proposed["partitions"]}, described
    listed = run_tool(tools, REASSIGN, *server, "--list")
    elected = run_tool(tools, ELECTION, *server, "--election-type", "preferred", "--topic", topic,
                       "--partition", "0")  # fmt: skip
    return {
        "execute": masked(executed).replace(topic, "T"),
        "verify": masked(verified).replace(topic, "T"),
        "list": listed,
        "election": elected.replace(topic, "T"),
    }


def test_kafka_reassign_partitions_and_leader_election(
    tools: Path, brokers: list[Broker], topic: str, tmp_path: Path
) -> None:
    outcomes = {b.name: reassign_and_elect(tools, b, topic, tmp_path) for b in brokers}
    assert outcomes["rillet"] == outcomes["kafka"]
