"""The backfill job's decisions without Spark: which committed ranges a run replaces, the
manifests, the file offset store, the writer's column checks and the command line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from rillet.spark_io.backfill_cli import add_parser, spark_error_line
from rillet.spark_io.backfill_manifest import MANIFEST, Manifest, load_manifests, superseded
from rillet.spark_io.backfill_parquet import event_date_expr
from rillet.spark_io.errors import BackfillError, OptionError
from rillet.spark_io.offset_store import FileOffsetStore
from rillet.spark_io.options import parse_write_options
from rillet.spark_io.writing import HEADERS_TYPE, plan_write


def manifest(seq: int, start: dict[int, int], end: dict[int, int], topic: str = "t") -> Manifest:
    return Manifest(f"range={seq:08d}", topic, start, end, rows=sum(end.values()))


def test_ranges_before_the_start_are_kept() -> None:
    done = [manifest(1, {0: 0, 1: 0}, {0: 10, 1: 5})]
    assert superseded(done, "t", {0: 10, 1: 5}, {0: 20, 1: 9}) == []


def test_a_range_published_but_not_recorded_is_replaced() -> None:
    crashed = manifest(2, {0: 10, 1: 5}, {0: 15, 1: 7})
    done = [manifest(1, {0: 0, 1: 0}, {0: 10, 1: 5}), crashed]
    assert superseded(done, "t", {0: 10, 1: 5}, {0: 20, 1: 9}) == [crashed]


def test_other_topics_and_empty_partitions_do_not_overlap() -> None:
    other = manifest(1, {0: 0}, {0: 100}, topic="u")
    empty = manifest(2, {0: 10, 1: 5}, {0: 10, 1: 5})
    assert superseded([other, empty], "t", {0: 10, 1: 5}, {0: 20, 1: 9}) == []


def test_an_offset_inside_a_committed_range_is_refused() -> None:
    done = [manifest(1, {0: 0}, {0: 10})]
    with pytest.raises(BackfillError, match=r"offset 4 lies inside it"):
        superseded(done, "t", {0: 4}, {0: 20})


def test_a_range_beyond_the_high_watermark_is_refused() -> None:
    done = [manifest(1, {0: 10}, {0: 30})]
    with pytest.raises(BackfillError, match=r"beyond the high watermark 20"):
        superseded(done, "t", {0: 10}, {0: 20})


def test_manifests_round_trip_and_strays_are_errors(tmp_path: Path) -> None:
    m = manifest(3, {0: 1}, {0: 9})
    (tmp_path / m.name).mkdir()
    (tmp_path / m.name / MANIFEST).write_text(json.dumps(m.to_json()))
    (tmp_path / "_staging").mkdir()
    assert load_manifests(tmp_path) == [m]
    assert m.sequence == 3
    (tmp_path / "range=00000004").mkdir()
    with pytest.raises(BackfillError, match=r"no readable _manifest.json"):
        load_manifests(tmp_path)


def test_file_offset_store(tmp_path: Path) -> None:
    store = FileOffsetStore(tmp_path / "o" / "g.json", "g")
    assert store.load("t") == {}
    store.save("t", {0: 5, 1: 7})
    store.save("u", {0: 1})
    store.save("t", {1: 9})
    assert store.load("t") == {0: 5, 1: 9}
    assert FileOffsetStore(tmp_path / "o" / "g.json", "g").load("u") == {0: 1}
    with pytest.raises(BackfillError, match=r"belongs to group 'g'"):
        FileOffsetStore(tmp_path / "o" / "g.json", "other").load("t")
    assert not list((tmp_path / "o").glob(".*tmp"))


def test_event_date_is_computed_in_utc() -> None:
    assert "unix_micros((timestamp))" in event_date_expr("timestamp")


def test_write_columns() -> None:
    opts = parse_write_options({"bootstrap": "h:1"})
    layout = plan_write(
        [
            ("Value", "string"),
            ("key", "binary"),
            ("topic", "string"),
            ("partition", "int"),
            ("headers", HEADERS_TYPE),
            ("timestamp", "timestamp"),
            ("offset", "bigint"),
            ("timestampType", "int"),
        ],
        opts,
    )
    assert layout.value == "Value" and layout.topic == "topic" and layout.fixed_topic is None
    with pytest.raises(OptionError, match=r"needs a 'value' column"):
        plan_write([("key", "binary"), ("topic", "string")], opts)
    with pytest.raises(OptionError, match=r"no topic"):
        plan_write([("value", "binary")], opts)
    with pytest.raises(OptionError, match=r"column 'vaule' cannot be written"):
        plan_write([("value", "binary"), ("vaule", "binary"), ("topic", "string")], opts)
    with pytest.raises(OptionError, match=r"'partition' has type bigint; it must be int"):
        plan_write([("value", "binary"), ("topic", "string"), ("partition", "bigint")], opts)
    fixed = parse_write_options({"bootstrap": "h:1", "topic": "out"})
    assert plan_write([("value", "binary"), ("topic", "string")], fixed).fixed_topic == "out"


def test_command_line() -> None:
    parser = argparse.ArgumentParser(prog="rillet spark")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        ["backfill", "--topic", "t", "--group", "g", "--output", "/tmp/o", "--bootstrap", "h:1"]
    )
    assert (args.topic, args.group, args.offsets_store, args.event_time) == (
        "t",
        "g",
        "group",
        "timestamp",
    )
    assert args.fail_on_data_loss is True and callable(args.run)
    args = parser.parse_args(
        [
            *("backfill", "--topic", "t", "--group", "g", "--output", "o"),
            *("--offsets-store", "file", "--no-fail-on-data-loss"),
            *("--conf", "spark.driver.memory=2g", "--max-records-per-partition", "10"),
        ]
    )
    assert args.conf == [("spark.driver.memory", "2g")] and not args.fail_on_data_loss
    for bad in (["--bootstrap", "nohost"], ["--max-records-per-partition", "0"], ["--conf", "x"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["backfill", "--topic", "t", "--group", "g", "--output", "o", *bad])


def test_spark_errors_are_shown_as_the_rillet_error_inside() -> None:
    wrapped = Exception(
        "[PYTHON_EXCEPTION] An exception was thrown from the Python worker:\n"
        "Traceback (most recent call last):\n  File ...\n"
        "rillet.spark_io.errors.DataLossError: t-0: offsets 0..9 were deleted SQLSTATE: 38000\n"
    )
    assert (
        spark_error_line(wrapped)
        == "rillet.spark_io.errors.DataLossError: t-0: offsets 0..9 were deleted"
    )
    assert spark_error_line(Exception("[UNRESOLVED_COLUMN] x\nmore")) == "[UNRESOLVED_COLUMN] x"
