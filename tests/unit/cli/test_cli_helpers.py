"""The pure pieces behind the client-side commands: line splitting, record formatting,
latency statistics, the describe table, the demo's round-trip check and the node argv."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from rillet.cli.cluster_status import BUSY, REFUSED, NodeProbe, no_answer_line
from rillet.cli.common import print_table
from rillet.cli.console_command import RecordFormat, split_lines
from rillet.cli.demo_command import RoundTrip
from rillet.cli.perf_command import (
    TARGET_SAMPLES,
    LatencySampler,
    _progress_line,
    _Window,
    latency_summary,
    percentile,
    sample_interval,
)
from rillet.cli.produce_line import split_key
from rillet.cli.topics_command import TABLE_HEADER, describe_rows
from rillet.client import ConsumerRecord, PartitionInfo, TopicDescription, TopicPartition
from rillet.launcher.local_node import node_command


def test_split_lines_keeps_the_unfinished_tail() -> None:
    assert split_lines(b"", b"a\nb\r\nc") == ([b"a", b"b"], b"c")
    assert split_lines(b"c", b"d\n") == ([b"cd"], b"")
    assert split_lines(b"x", b"") == ([], b"x")
    assert split_lines(b"", b"\n\n") == ([b"", b""], b"")


def test_split_key_at_the_first_separator_only() -> None:
    assert split_key(b"k:v:w", b":") == (b"k", b"v:w")
    assert split_key(b"no-sep", b":") == (None, b"no-sep")
    assert split_key(b"k:v", None) == (None, b"k:v")
    assert split_key(b":v", b"::") == (None, b":v")
    assert split_key(b"::v", b"::") == (b"", b"v")


def record(key: bytes | None, value: bytes | None) -> ConsumerRecord:
    return ConsumerRecord("t", 2, 17, 1_700_000_000_000, key, value, [])


def test_record_format_fields_in_order() -> None:
    r = record(b"k", b"v")
    assert RecordFormat().line(r) == "v"
    assert RecordFormat("|", offset=True, timestamp=True, key=True).line(r) == (
        "2:17|1700000000000|k|v"
    )
    assert RecordFormat(key=True).line(record(None, None)) == "\t"


def test_record_format_headers_before_the_key() -> None:
    r = ConsumerRecord("t", 0, 1, 5, b"k", b"v", [("a", b"1"), ("b", b"")])
    assert RecordFormat(" ", headers=True, key=True).line(r) == "a=1,b= k v"
    assert RecordFormat(" ", headers=True).line(record(None, b"v")) == " v"


def test_record_format_prints_a_null_header_value_as_null() -> None:
    r = ConsumerRecord("t", 0, 1, 5, None, b"v", [("a", None), ("b", b"x")])
    assert RecordFormat(" ", headers=True).line(r) == "a=null,b=x v"


def test_record_format_replaces_undecodable_bytes() -> None:
    assert RecordFormat().line(record(None, b"ok\xff")) == "ok\ufffd"


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50
    assert percentile(values, 0.99) == 99
    assert percentile(values, 0.999) == 100
    assert percentile([3.0], 0.5) == 3
    assert math.isnan(percentile([], 0.5))


def test_latency_summary() -> None:
    summary = latency_summary([4.0, 1.0, 3.0, 2.0])
    assert summary == {
        "samples": 4,
        "avg": 2.5,
        "p50": 2.0,
        "p95": 4.0,
        "p99": 4.0,
        "p99_9": 4.0,
        "max": 4.0,
    }
    empty = latency_summary([])
    assert empty["samples"] == 0 and empty["p99"] is None and empty["max"] is None


def test_sample_interval() -> None:
    assert sample_interval(1_000_000, 0) == 1_000_000 // TARGET_SAMPLES
    assert sample_interval(10, 0) == 1
    assert sample_interval(1_000_000, 7) == 7


def test_describe_rows_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    topics = [
        TopicDescription(
            "events",
            [PartitionInfo(0, 1, 3, [1, 2, 3], [1, 2]), PartitionInfo(1, -1, 0, [2], [])],
            {},
        )
    ]
    tp0, tp1 = TopicPartition("events", 0), TopicPartition("events", 1)
    rows = describe_rows(topics, {tp0: 5, tp1: 0}, {tp0: 120})
    assert rows == [
        TABLE_HEADER,
        ("events", "0", "1", "3", "1,2,3", "1,2", "5", "120"),
        ("events", "1", "-", "0", "2", "", "0", "?"),
    ]
    print_table(rows)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == list(TABLE_HEADER)
    assert lines[1].split() == ["events", "0", "1", "3", "1,2,3", "1,2", "5", "120"]
    assert all(line == line.rstrip() for line in lines)


def consumed(partition: int, offset: int, key: bytes, value: bytes) -> ConsumerRecord:
    return ConsumerRecord("demo", partition, offset, 0, key, value, [])


def test_round_trip_accepts_what_was_acknowledged_after_older_records() -> None:
    trip = RoundTrip({0: 1, 1: 0})
    trip.acked[0] += [(1, b"a", b"v1"), (2, b"a", b"v2")]
    trip.acked[1] += [(0, b"b", b"v3")]
    trip.read[0] += [consumed(0, 0, b"old", b"old"), consumed(0, 1, b"a", b"v1")]
    trip.read[0] += [consumed(0, 2, b"a", b"v2")]
    trip.read[1] += [consumed(1, 0, b"b", b"v3")]
    assert trip.problems() == []


def test_round_trip_reports_loss_reordering_and_split_keys() -> None:
    trip = RoundTrip({0: 0, 1: 0})
    trip.acked[0] += [(0, b"a", b"v1"), (1, b"a", b"v2")]
    trip.acked[1] += [(0, b"a", b"v3")]  # key a on two partitions
    trip.read[0] += [consumed(0, 1, b"a", b"v2"), consumed(0, 0, b"a", b"v1")]  # reordered
    problems = trip.problems()
    assert any("key b'a'" in p for p in problems)
    assert any(p.startswith("partition 0") and "order" in p for p in problems)
    assert any(p.startswith("partition 1: read 0 records") for p in problems)


def test_node_command_runs_this_interpreter_on_an_ephemeral_port(tmp_path: Path) -> None:
    argv = node_command(tmp_path / "d", tmp_path / "r.json", None, ["--node-id", "2"])
    assert argv[:3] == [sys.executable, "-m", "rillet.cli.main"]
    assert argv[argv.index("--port") + 1] == "0"
    assert argv[argv.index("--data-dir") + 1] == str(tmp_path / "d")
    assert argv[argv.index("--ready-file") + 1] == str(tmp_path / "r.json")
    assert "--config" not in argv
    assert argv[-2:] == ["--node-id", "2"]
    with_config = node_command(tmp_path / "d", tmp_path / "r.json", tmp_path / "n.toml", [])
    assert with_config[with_config.index("--config") + 1] == str(tmp_path / "n.toml")


def test_round_trip_reports_changed_bytes() -> None:
    trip = RoundTrip({0: 0})
    trip.acked[0] += [(0, b"a", b"v1"), (1, b"a", b"v2")]
    trip.read[0] += [consumed(0, 0, b"a", b"v1"), consumed(0, 1, b"a", b"XX")]
    assert trip.problems() == ["partition 0: records differ from the acknowledged ones at 1"]


def test_cluster_status_tells_down_from_busy() -> None:
    """Issue 16: paused nodes were reported as "the cluster is down"."""
    refused = {1: NodeProbe(None, REFUSED), 2: NodeProbe(None, REFUSED)}
    assert "the cluster is down" in no_answer_line(refused, {})
    busy = {1: NodeProbe(None, BUSY), 2: NodeProbe(None, REFUSED)}
    line = no_answer_line(busy, {1: 100, 3: 300})
    assert "down" not in line and "node(s) 1 accepted" in line
    assert "2 node(s) are running but busy" in line


def test_perf_progress_without_acknowledgements_prints_no_nan() -> None:
    """Issue 16: progress lines said ``nan ms`` latency when nothing was acknowledged."""
    line = _progress_line(_Window(0.0), 5.0, 1000, 100, LatencySampler())
    assert "nan" not in line and "no sampled record acknowledged" in line
    sampler = LatencySampler(values_ms=[2.0, 4.0])
    assert "3.0 ms avg latency, 4.0 ms max latency" in _progress_line(
        _Window(0.0), 5.0, 1000, 100, sampler
    )
