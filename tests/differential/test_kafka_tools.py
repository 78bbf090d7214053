"""Kafka's own command-line tools (Apache Kafka 4.x, run from their Maven jars) against
rillet's Kafka listener, and the same commands against a real Kafka broker.

What a Kafka user tries first: ``kafka-topics`` creates and describes a topic, the console
producer writes keyed records with acks=all, the console consumer reads them back in a
classic group, ``kafka-consumer-groups`` shows the group's offsets without lag, resets them,
deletes the topic's offsets (OffsetDelete) and deletes the group, and ``kafka-configs``
changes a topic setting. The tools' jars come like the broker's (``real_kafka.ensure_jars``);
without Java, Maven or Maven Central the test is skipped with the reason.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from broker_pair import Broker

TOOL_TIMEOUT_S = 90
RECORDS = 300
PARTITIONS = 4


def run_tool(jars: Path, tool: str, *args: str, stdin: str | None = None) -> str:
    """Run one tool class to completion (killed at the timeout); its stdout, or a failure
    naming the command and its stderr."""
    cmd = ["java", "-XX:TieredStopAtLevel=1", "-cp", f"{jars}/*", tool, *args]
    done = subprocess.run(
        cmd, input=stdin, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, check=False
    )
    assert done.returncode == 0, f"{tool} {' '.join(args)}: exit {done.returncode}\n{done.stderr}"
    return done.stdout


TOPICS = "org.apache.kafka.tools.TopicCommand"
PRODUCER = "org.apache.kafka.tools.ConsoleProducer"
CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
CONFIGS = "org.apache.kafka.tools.ConfigCommand"


def test_kafkas_command_line_tools(tools: Path, brokers: list[Broker], topic: str) -> None:
    for b in brokers:
        server = ("--bootstrap-server", b.bootstrap)
        created = run_tool(
            tools,
            TOPICS,
            *server,
            "--create",
            "--topic",
            topic,
            "--partitions",
            str(PARTITIONS),
            "--replication-factor",
            str(b.replication_factor),
        )
        assert f"Created topic {topic}." in created, b.name
        described = run_tool(tools, TOPICS, *server, "--describe", "--topic", topic)
        rows = [line for line in described.splitlines() if "Partition:" in line and "Isr:" in line]
        assert len(rows) == PARTITIONS, (b.name, described)
        assert topic in run_tool(tools, TOPICS, *server, "--list").split(), b.name

        lines = "".join(f"k{i % 7}:v{i}\n" for i in range(RECORDS))
        run_tool(
            tools,
            PRODUCER,
            *server,
            "--topic",
            topic,
            "--command-property",
            "acks=all",
            "--reader-property",
            "parse.key=true",
            "--reader-property",
            "key.separator=:",
            stdin=lines,
        )
        group = f"{topic}-g"
        consumed = run_tool(
            tools,
            CONSUMER,
            *server,
            "--topic",
            topic,
            "--group",
            group,
            "--from-beginning",
            "--max-messages",
            str(RECORDS),
            "--timeout-ms",
            "30000",
            "--formatter-property",
            "print.key=true",
            "--formatter-property",
            "key.separator=:",
        )
        assert sorted(consumed.split()) == sorted(lines.split()), b.name

        offsets = run_tool(tools, GROUPS, *server, "--describe", "--group", group)
        rows = [line.split() for line in offsets.splitlines() if line.startswith(group + " ")]
        assert len(rows) == PARTITIONS, (b.name, offsets)
        # GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
        assert sum(int(r[3]) for r in rows) == RECORDS and all(r[5] == "0" for r in rows)
        assert group in run_tool(tools, GROUPS, *server, "--list").split(), b.name
        reset = run_tool(
            tools,
            GROUPS,
            *server,
            "--reset-offsets",
            "--group",
            group,
            "--topic",
            topic,
            "--to-earliest",
            "--execute",
        )
        new_offsets = [line.split()[-1] for line in reset.splitlines() if topic in line]
        assert new_offsets == ["0"] * PARTITIONS, (b.name, reset)
        offsets_deleted = run_tool(
            tools, GROUPS, *server, "--delete-offsets", "--group", group, "--topic", topic
        )
        statuses = [
            line.split()[-1]
            for line in offsets_deleted.splitlines()
            if line.startswith(topic + " ")
        ]
        assert statuses == ["Successful"] * PARTITIONS, (b.name, offsets_deleted)
        deleted = run_tool(tools, GROUPS, *server, "--delete", "--group", group)
        assert "successful" in deleted, (b.name, deleted)
        assert group not in run_tool(tools, GROUPS, *server, "--list").split(), b.name

        run_tool(
            tools,
            CONFIGS,
            *server,
            "--alter",
            "--entity-type",
            "topics",
            "--entity-name",
            topic,
            "--add-config",
            "retention.ms=3600000",
        )
        configs = run_tool(
            tools, CONFIGS, *server, "--describe", "--entity-type", "topics", "--entity-name", topic
        )
        assert re.search(r"retention\.ms=3600000\b", configs), (b.name, configs)
