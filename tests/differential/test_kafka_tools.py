"""Kafka's own command-line tools (Apache Kafka 4.x, run from their Maven jars) against
rillet's Kafka listener, and the same commands against a real Kafka broker.

What a Kafka user tries first: ``kafka-topics`` creates and describes a topic, the console
producer writes keyed records with acks=all, the console consumer reads them back in a
classic group, ``kafka-consumer-groups`` shows the group's offsets without lag, resets them,
deletes the topic's offsets (OffsetDelete) and deletes the group, and ``kafka-configs``
changes a topic setting. Then the tools' answers must have the same shape on both:
``kafka-topics --describe`` (DescribeTopicPartitions), ``kafka-consumer-groups --describe
--all-groups``, ``kafka-get-offsets --time -3``, ``kafka-log-dirs --describe``,
``kafka-configs --describe --all`` on brokers and on a group, ``kafka-features describe``
and ``upgrade --dry-run`` to the level in force, and ``kafka-metadata-quorum describe
--status`` (a refused upgrade's message is Kafka's word for word: test_kafka_features.py).
The tools' jars come like the broker's (``real_kafka.ensure_jars``); without Java, Maven or
Maven Central the test is skipped with the reason.
"""

from __future__ import annotations

import json
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
GET_OFFSETS = "org.apache.kafka.tools.GetOffsetShell"
LOG_DIRS = "org.apache.kafka.tools.LogDirsCommand"
FEATURES = "org.apache.kafka.tools.FeatureCommand"
QUORUM = "org.apache.kafka.tools.MetadataQuorumCommand"


def admin_answers(jars: Path, bootstrap: str, topic: str) -> dict[str, object]:
    """The operator tools' answers about a topic holding records, reduced to their shape
    (columns, keys, which values are numbers): what must be the same on Kafka and rillet."""
    server = ("--bootstrap-server", bootstrap)
    shapes: dict[str, object] = {}
    latest = run_tool(jars, GET_OFFSETS, *server, "--topic", topic, "--time", "-3")
    rows = [line.rsplit(":", 2) for line in latest.split()]
    assert rows and all(r[0] == topic and int(r[2]) >= 0 for r in rows), latest
    shapes["get-offsets --time -3"] = sorted(int(r[1]) for r in rows)

    described = run_tool(jars, LOG_DIRS, *server, "--describe", "--topic-list", topic)
    found = json.loads(described.splitlines()[-1])
    dirs = [d for b in found["brokers"] for d in b["logDirs"]]
    parts = [p for d in dirs for p in d["partitions"]]
    assert dirs and all(d["error"] is None for d in dirs), described
    assert all(p["size"] >= 0 and p["offsetLag"] == 0 and not p["isFuture"] for p in parts), (
        described
    )
    assert sum(p["size"] for p in parts) > 0, described
    shapes["log-dirs --describe"] = (
        sorted(found),
        {k for b in found["brokers"] for k in b},
        {k for d in dirs for k in d},
        {k for p in parts for k in p},
        sorted({p["partition"] for p in parts}),
    )

    for entity, name in (("brokers", None), ("groups", f"{topic}-g")):
        named = ("--entity-name", name) if name else ()
        args = ("--describe", "--all", "--entity-type", entity, *named)
        shapes[f"configs {entity}"] = config_listing(run_tool(jars, CONFIGS, *server, *args))

    features = run_tool(jars, FEATURES, *server, "describe")
    rows = [dict(re.findall(r"(\w+): (\S+)", line)) for line in features.splitlines()]
    mv = [r for r in rows if r.get("Feature") == "metadata.version"]
    assert len(mv) == 1 and re.fullmatch(r"\d+\.\d+-IV\d+", mv[0]["FinalizedVersionLevel"]), rows
    shapes["features describe"] = sorted({tuple(r) for r in rows})
    level = mv[0]["FinalizedVersionLevel"]
    upgraded = run_tool(jars, FEATURES, *server, "upgrade", "--metadata", level, "--dry-run")
    shapes["features upgrade --dry-run"] = _masked(upgraded)

    status = run_tool(jars, QUORUM, *server, "describe", "--status")
    fields = dict(re.findall(r"^(\w+):\s+(.*)$", status, re.M))
    assert int(fields["LeaderId"]) >= 0 and int(fields["HighWatermark"]) > 0, status
    shapes["metadata-quorum describe --status"] = sorted(fields)
    return shapes


def _masked(text: str) -> list[str]:
    """A tool's output lines with numbers, versions and node ids masked."""
    return [re.sub(r"\d+(\.\d+-IV\d+)?", "N", line) for line in text.strip().splitlines()]


def _topic_shape(described: str) -> list[list[str]]:
    """``kafka-topics --describe``'s lines as their field names."""
    return [re.findall(r"(\w+):", line) for line in described.strip().splitlines()]


CONFIG_LINE = re.compile(r"^  ([a-z0-9.]+)=(.*) sensitive=(true|false) synonyms=\{(.*)\}$")
# What a broker of either kind has, under Kafka's names.
BROKER_BASICS = {"advertised.listeners", "listeners", "log.dirs", "num.partitions", "node.id"}


def config_listing(text: str) -> object:
    """``kafka-configs --describe --all``'s headers (numbers masked) and, of the settings
    listed, which basic ones are there; every other line must be a setting."""
    headers = {re.sub(r"\d+", "N", line) for line in text.splitlines() if line.endswith(":")}
    names = set()
    for line in text.splitlines():
        if line.endswith(":") or not line.strip():
            continue
        match = CONFIG_LINE.match(line)
        assert match, (line, text)
        names.add(match.group(1))
    return sorted(headers), sorted(names & (BROKER_BASICS | {"consumer.heartbeat.interval.ms"}))


def test_kafkas_command_line_tools(tools: Path, brokers: list[Broker], topic: str) -> None:
    shapes = {}
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
        shape_of: dict[str, object] = {"topics --describe": _topic_shape(described)}
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
        every = run_tool(tools, GROUPS, *server, "--describe", "--all-groups")
        mine = [line.split() for line in every.splitlines() if line.startswith(group + " ")]
        assert sorted(mine) == sorted(rows), (b.name, every)
        shape_of["consumer-groups --describe --all-groups"] = [
            line.split() for line in every.splitlines() if line.startswith("GROUP")
        ]
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
        shapes[b.name] = {**shape_of, **admin_answers(tools, b.bootstrap, topic)}
    assert shapes["rillet"] == shapes["kafka"]
