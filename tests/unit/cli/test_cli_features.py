"""Parsing and formatting of the Kafka-CLI features: --from-time, --group, --output json,
--under-replicated / --unavailable, --if-not-exists / --if-exists."""

from __future__ import annotations

import argparse
import json

import pytest

from rillet.cli import groups_command
from rillet.cli.common import timestamp_ms_arg
from rillet.cli.console_command import consume_usage_problem
from rillet.cli.main import build_parser
from rillet.cli.record_output import RecordFormat, json_bytes, json_line
from rillet.cli.topics_command import describe_json, only_partitions
from rillet.client import ConsumerRecord, TopicPartition
from rillet.client.types import PartitionInfo, TopicDescription
from rillet.wire.group_messages import GroupDescription, GroupTopicPartitions, MemberDescription


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


# -- points in time -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("1795521197989", 1795521197989),
        ("0", 0),
        ("2026-11-24T10:00:00Z", 1795514400000),
        ("2026-11-24T10:00:00", 1795514400000),  # no zone: UTC
        ("2026-11-24T11:00:00+01:00", 1795514400000),
        ("2026-11-24 10:00:00.250Z", 1795514400250),
        ("2026-11-24", 1795478400000),
    ],
)
def test_timestamps_in_epoch_ms_or_iso_8601(text: str, ms: int) -> None:
    assert timestamp_ms_arg(text) == ms


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01", "-5", "", "1969-12-31T00:00:00Z"])
def test_bad_timestamps_are_usage_errors(capsys: pytest.CaptureFixture[str], bad: str) -> None:
    for argv in (
        ["consume", "t", "--from-time", bad],
        ["groups", "reset-offsets", "g", "--to-datetime", bad],
    ):
        with pytest.raises(SystemExit) as info:
            parse(*argv)
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert "error: argument" in err and "Traceback" not in err


def test_from_time_excludes_the_other_starts(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse("consume", "t", "--from-time", "5").from_time == 5
    with pytest.raises(SystemExit):
        parse("consume", "t", "--from-time", "5", "--from-beginning")
    assert "not allowed with" in capsys.readouterr().err


# -- consume --group ----------------------------------------------------------------------


def test_group_combinations() -> None:
    assert consume_usage_problem(parse("consume", "t", "--group", "g")) is None
    ok = parse("consume", "t", "--group", "g", "--from-beginning", "--max-messages", "3")
    assert consume_usage_problem(ok) is None
    for extra in (
        ["--partition", "0"],
        ["--from-time", "1"],
        ["--offset", "1", "--partition", "0"],
    ):
        problem = consume_usage_problem(parse("consume", "t", "--group", "g", *extra))
        assert problem is not None and problem.startswith("--group cannot be combined with")
    assert consume_usage_problem(parse("consume", "t", "--offset", "3")) == (
        "--offset needs --partition"
    )


# -- consume --output json ----------------------------------------------------------------


def test_json_bytes_are_text_when_utf8_else_base64() -> None:
    assert json_bytes(None) is None
    assert json_bytes(b"caf\xc3\xa9") == "café"
    assert json_bytes(b"\xff\x00") == {"base64": "/wA="}


def test_json_line_has_every_field() -> None:
    r = ConsumerRecord("t", 2, 7, 1234, b"k", b"\xff", [("h", b"1"), ("h", None)])
    assert json.loads(json_line(r)) == {
        "topic": "t",
        "partition": 2,
        "offset": 7,
        "timestamp": 1234,
        "key": "k",
        "value": {"base64": "/w=="},
        "headers": [{"key": "h", "value": "1"}, {"key": "h", "value": None}],
    }
    args = parse("consume", "t", "--output", "json", "--print-key")
    assert RecordFormat.from_args(args).line(r) == json_line(r)
    assert "\n" not in json_line(ConsumerRecord("t", 0, 0, 0, None, b"a\nb", ()))


# -- topics -------------------------------------------------------------------------------


def topics() -> list[TopicDescription]:
    return [
        TopicDescription(
            "a",
            [
                PartitionInfo(0, 1, 0, [1, 2], [1, 2]),
                PartitionInfo(1, 2, 3, [1, 2], [2]),
                PartitionInfo(2, -1, 3, [1, 2], []),
            ],
            {"retention.ms": "5"},
        ),
        TopicDescription("b", [PartitionInfo(0, 1, 0, [1], [1])], {}),
    ]


def test_filters_keep_matching_partitions_and_drop_empty_topics() -> None:
    under = only_partitions(topics(), lambda p: len(p.isr) < len(p.replicas))
    assert [(t.name, [p.partition for p in t.partitions]) for t in under] == [("a", [1, 2])]
    unavailable = only_partitions(topics(), lambda p: p.leader < 0)
    assert [(t.name, [p.partition for p in t.partitions]) for t in unavailable] == [("a", [2])]


def test_topic_filters_and_flags_parse(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse("topics", "describe", "--under-replicated").under_replicated
    assert parse("topics", "describe", "x", "--unavailable", "--output", "json").unavailable
    with pytest.raises(SystemExit):
        parse("topics", "describe", "--under-replicated", "--unavailable")
    capsys.readouterr()
    assert parse("topics", "create", "t", "--if-not-exists").if_not_exists
    assert parse("topics", "delete", "t", "u", "--if-exists").if_exists
    assert parse("topics", "list", "--output", "json").output == "json"
    assert parse("groups", "list", "--output", "json").output == "json"


def test_describe_json() -> None:
    tp = TopicPartition("a", 0)
    (first, second) = describe_json(topics(), {tp: 1}, {tp: 9})
    assert first["name"] == "a" and first["configs"] == {"retention.ms": "5"}
    assert first["partitions"][0] == {
        "partition": 0,
        "leader": 1,
        "leader_epoch": 0,
        "replicas": [1, 2],
        "isr": [1, 2],
        "log_start_offset": 1,
        "end_offset": 9,
    }
    assert first["partitions"][2]["end_offset"] is None
    assert second["partitions"][0]["leader"] == 1


# -- groups -------------------------------------------------------------------------------


def test_group_describe_json() -> None:
    member = MemberDescription(
        "m-1234567890abcdef", None, "10.0.0.1", ["a"], None, [GroupTopicPartitions("a", [0])], []
    )
    group = GroupDescription("g", 0, 5, "sticky", [member])
    t0, t1 = TopicPartition("a", 0), TopicPartition("a", 1)
    doc = groups_command.describe_json(group, {t1: 4}, {t0: 10, t1: 6}, {t0: member.member_id})
    assert doc["members"][0]["owned"] == {"a": [0]}
    assert doc["members"][0]["member_id"] == "m-1234567890abcdef"  # not cut for scripts
    assert doc["partitions"] == [
        {
            "topic": "a",
            "partition": 0,
            "committed": None,
            "end_offset": 10,
            "lag": None,
            "owner": "m-1234567890abcdef",
        },
        {"topic": "a", "partition": 1, "committed": 4, "end_offset": 6, "lag": 2, "owner": None},
    ]
