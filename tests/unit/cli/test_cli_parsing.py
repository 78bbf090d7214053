"""Argument parsing of the client-side ``rillet`` commands: fast, no node needed.

Each command's parser is the one ``rillet`` builds (main.build_parser), so these tests also
check that every command module is registered.
"""

from __future__ import annotations

import argparse

import pytest

from rillet.cli import console_command, demo_command, perf_command, topics_command
from rillet.cli.common import BOOTSTRAP_ENV, DEFAULT_BOOTSTRAP
from rillet.cli.main import build_parser


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Parse argv expecting argparse to reject it (exit status 2); returns its message."""
    with pytest.raises(SystemExit) as exc_info:
        parse(*argv)
    assert exc_info.value.code == 2
    return capsys.readouterr().err


# -- --bootstrap ------------------------------------------------------------------------


def test_bootstrap_defaults_to_localhost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BOOTSTRAP_ENV, raising=False)
    assert parse("topics", "list").bootstrap == DEFAULT_BOOTSTRAP == "127.0.0.1:9092"


def test_bootstrap_env_overrides_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BOOTSTRAP_ENV, "10.0.0.1:9000,10.0.0.2:9000")
    assert parse("consume", "t").bootstrap == "10.0.0.1:9000,10.0.0.2:9000"
    assert parse("consume", "t", "--bootstrap", "h:1").bootstrap == "h:1"


@pytest.mark.parametrize(
    "argv",
    [
        ["topics", "list"],
        ["topics", "create", "t"],
        ["topics", "describe"],
        ["topics", "delete", "t"],
        ["produce", "t"],
        ["consume", "t"],
        ["perf", "produce", "--topic", "t", "--num-records", "1"],
        ["perf", "consume", "--topic", "t", "--num-records", "1"],
        ["demo"],
    ],
)
def test_every_client_command_takes_bootstrap(argv: list[str]) -> None:
    assert parse(*argv, "--bootstrap", "node1:9092,node2:9092").bootstrap == (
        "node1:9092,node2:9092"
    )


@pytest.mark.parametrize("bad", ["foo", "host:", ":9092", "host:port", "host:70000", ""])
def test_malformed_bootstrap_is_a_usage_error(capsys: pytest.CaptureFixture[str], bad: str) -> None:
    assert "--bootstrap" in usage_error(capsys, "topics", "list", "--bootstrap", bad)


# -- topics -----------------------------------------------------------------------------


def test_topics_create_with_everything() -> None:
    args = parse(
        "topics",
        "create",
        "events",
        "--partitions",
        "3",
        "--replication-factor",
        "2",
        "--config",
        "retention.ms=3600000",
        "--config",
        "cleanup.policy=delete",
        "--config",
        "empty=",
    )
    assert args.run is topics_command.run_create
    assert (args.name, args.partitions, args.replication_factor) == ("events", 3, 2)
    assert dict(args.configs) == {
        "retention.ms": "3600000",
        "cleanup.policy": "delete",
        "empty": "",
    }


def test_topics_create_defaults_leave_counts_to_the_node() -> None:
    args = parse("topics", "create", "events")
    assert (args.partitions, args.replication_factor, args.configs) == (-1, -1, [])


@pytest.mark.parametrize("bad", ["retention.ms", "=1", " =1"])
def test_topics_create_rejects_config_without_key_value(
    capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    assert "KEY=VALUE" in usage_error(capsys, "topics", "create", "t", "--config", bad)


def test_topics_list_describe_delete() -> None:
    assert parse("topics", "list").run is topics_command.run_list
    described = parse("topics", "describe")
    assert (described.run, described.names) == (topics_command.run_describe, [])
    assert parse("topics", "describe", "a", "b").names == ["a", "b"]
    deleted = parse("topics", "delete", "a", "b")
    assert (deleted.run, deleted.names) == (topics_command.run_delete, ["a", "b"])


def test_topics_needs_an_action_and_delete_a_name(capsys: pytest.CaptureFixture[str]) -> None:
    usage_error(capsys, "topics")
    usage_error(capsys, "topics", "delete")
    usage_error(capsys, "topics", "create")


# -- produce ----------------------------------------------------------------------------


def test_produce_defaults() -> None:
    args = parse("produce", "events")
    assert args.run is console_command.run_produce
    assert args.topic == "events"
    assert args.acks == "all"
    assert args.key_separator is None
    assert args.partition is None
    assert args.headers == []
    assert args.linger_ms == 5
    assert args.max_block_ms == 10_000


def test_produce_with_everything() -> None:
    args = parse(
        "produce",
        "events",
        "--key-separator",
        ":",
        "--acks",
        "1",
        "--partition",
        "2",
        "--header",
        "source=cli",
        "--header",
        "trace=a=b",
        "--linger-ms",
        "0",
    )
    assert (args.key_separator, args.acks, args.partition, args.linger_ms) == (":", "1", 2, 0)
    assert args.headers == [("source", "cli"), ("trace", "a=b")]


@pytest.mark.parametrize(
    "argv",
    [
        ["--acks", "2"],
        ["--acks", "most"],
        ["--partition", "-1"],
        ["--partition", "x"],
        ["--header", "novalue"],
        ["--max-block-ms", "0"],
    ],
)
def test_produce_rejects(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    usage_error(capsys, "produce", "events", *argv)


# -- consume ----------------------------------------------------------------------------


def test_consume_defaults_start_at_the_end_and_run_forever() -> None:
    args = parse("consume", "events")
    assert args.run is console_command.run_consume
    assert not args.from_beginning
    assert args.offset is None and args.partition is None
    assert args.max_messages is None and args.timeout_ms is None
    assert not (args.print_key or args.print_offset or args.print_timestamp)
    assert not args.print_headers
    assert args.key_separator == "\t"


def test_consume_with_everything() -> None:
    args = parse(
        "consume",
        "events",
        "--partition",
        "1",
        "--offset",
        "42",
        "--max-messages",
        "10",
        "--timeout-ms",
        "2000",
        "--print-key",
        "--print-offset",
        "--print-timestamp",
        "--print-headers",
        "--key-separator",
        ":",
    )
    assert (args.partition, args.offset, args.max_messages, args.timeout_ms) == (1, 42, 10, 2000)
    assert args.print_key and args.print_offset and args.print_timestamp and args.print_headers
    assert args.key_separator == ":"


def test_consume_from_beginning() -> None:
    assert parse("consume", "events", "--from-beginning").from_beginning


@pytest.mark.parametrize(
    "argv",
    [
        ["--from-beginning", "--offset", "3"],  # two different starting points
        ["--max-messages", "0"],
        ["--timeout-ms", "-1"],
        ["--offset", "-5"],
    ],
)
def test_consume_rejects(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    usage_error(capsys, "consume", "events", *argv)


def test_consume_offset_without_partition_is_refused_before_connecting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Port 1 would refuse a connection: exit status 2 shows no connection was attempted.
    args = parse("consume", "events", "--offset", "3", "--bootstrap", "127.0.0.1:1")
    assert args.run(args) == 2
    assert "--offset needs --partition" in capsys.readouterr().err


# -- perf -------------------------------------------------------------------------------


def test_perf_produce_defaults() -> None:
    args = parse("perf", "produce", "--topic", "p", "--num-records", "1000")
    assert args.run is perf_command.run_produce
    assert (args.topic, args.num_records, args.record_size) == ("p", 1000, 100)
    assert (args.acks, args.batch_bytes, args.linger_ms) == ("1", 512 * 1024, 5)
    assert args.throughput == -1 and args.sample_every == 0
    assert args.compression == "none" and not args.json


def test_perf_produce_with_everything() -> None:
    args = parse(
        "perf",
        "produce",
        "--topic",
        "p",
        "--num-records",
        "5",
        "--record-size",
        "1024",
        "--acks",
        "all",
        "--batch-bytes",
        "65536",
        "--linger-ms",
        "0",
        "--throughput",
        "2500.5",
        "--sample-every",
        "10",
        "--compression",
        "zstd",
        "--json",
    )
    assert (args.record_size, args.acks, args.batch_bytes, args.linger_ms) == (
        1024,
        "all",
        65536,
        0,
    )
    assert (args.throughput, args.sample_every, args.compression, args.json) == (
        2500.5,
        10,
        "zstd",
        True,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--num-records", "10"],  # no --topic
        ["--topic", "p"],  # no --num-records
        ["--topic", "p", "--num-records", "0"],
        ["--topic", "p", "--num-records", "1", "--compression", "lz5"],
        ["--topic", "p", "--num-records", "1", "--batch-bytes", "0"],
    ],
)
def test_perf_produce_rejects(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    usage_error(capsys, "perf", "produce", *argv)


def test_perf_consume() -> None:
    args = parse("perf", "consume", "--topic", "p", "--num-records", "7", "--json")
    assert args.run is perf_command.run_consume
    assert (args.topic, args.num_records, args.json, args.timeout_ms) == ("p", 7, True, 10_000)
    usage_error_args = ["perf", "consume", "--topic", "p"]
    with pytest.raises(SystemExit):
        parse(*usage_error_args)


# -- demo -------------------------------------------------------------------------------


def test_demo_starts_its_own_node_unless_given_bootstrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BOOTSTRAP_ENV, "elsewhere:9092")  # the demo ignores the env on purpose
    args = parse("demo")
    assert args.run is demo_command.run
    assert args.bootstrap is None and args.data_dir is None
    assert args.records == demo_command.RECORDS == 1000
    args = parse("demo", "--bootstrap", "h:9092", "--data-dir", "/tmp/d", "--records", "10")
    assert (args.bootstrap, str(args.data_dir), args.records) == ("h:9092", "/tmp/d", 10)
