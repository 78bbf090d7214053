"""Option parsing of format("rillet"): every mistake is an OptionError naming the option."""

from __future__ import annotations

from pathlib import Path

import pytest

from rillet.client.types import TopicPartition
from rillet.spark_io.errors import OptionError
from rillet.spark_io.offset_spec import EARLIEST, LATEST
from rillet.spark_io.offsets_codec import offsets_from_dict, offsets_json, offsets_to_dict
from rillet.spark_io.options import parse_read_options, parse_write_options
from rillet.spark_io.subscription import Assign, Subscribe, SubscribePattern

BASE = {"bootstrap": "127.0.0.1:9092", "subscribe": "events"}


def read(streaming: bool = False, **options: str) -> object:
    return parse_read_options({**BASE, **options}, streaming=streaming)


def fails(
    match: str, streaming: bool = False, base: dict[str, str] | None = None, **options: str
) -> None:
    with pytest.raises(OptionError, match=match):
        parse_read_options({**(BASE if base is None else base), **options}, streaming=streaming)


def test_defaults_follow_spark_s_kafka_source() -> None:
    opts = parse_read_options(BASE)
    assert opts.subscription == Subscribe(("events",))
    assert opts.starting.kind == "earliest"
    assert opts.ending.kind == "latest"
    assert opts.fail_on_data_loss is True
    assert opts.include_headers is False
    assert opts.min_partitions is None and opts.max_records_per_partition is None
    streaming = parse_read_options(BASE, streaming=True)
    assert streaming.starting.kind == "latest"  # a new stream starts at the end


def test_option_names_ignore_case_like_spark() -> None:
    opts = parse_read_options(
        {"BOOTSTRAP": "h:1", "Subscribe": "a, b", "failondataloss": "FALSE", "MINPARTITIONS": "4"}
    )
    assert opts.subscription == Subscribe(("a", "b"))
    assert opts.fail_on_data_loss is False
    assert opts.min_partitions == 4


def test_exactly_one_subscription() -> None:
    fails("exactly one of 'subscribe'.*got none", base={"bootstrap": "h:1"})
    fails("got subscribe, assign", assign='{"t": [0]}')


def test_bootstrap_is_required_and_checked() -> None:
    fails("'bootstrap' .*is required", base={"subscribe": "t"})
    fails("option 'bootstrap'.*not host:port", bootstrap="nohost")


def test_kafka_bootstrap_servers_is_an_alias_of_bootstrap() -> None:
    """Jobs written for format("kafka") work with format("rillet") unchanged."""
    alias = {"kafka.bootstrap.servers": "h1:1,h2:2", "subscribe": "t"}
    assert parse_read_options(alias).bootstrap == "h1:1,h2:2"
    assert parse_read_options({**alias, "bootstrap": "h1:1,h2:2"}).bootstrap == "h1:1,h2:2"
    assert parse_write_options({"kafka.bootstrap.servers": "h:1", "topic": "t"}).bootstrap == "h:1"
    fails("name different servers", base=alias, bootstrap="h3:3")
    fails("option 'kafka.bootstrap.servers'.*not host:port", base={"subscribe": "t"},
          **{"kafka.bootstrap.servers": "nohost"})  # fmt: skip


def test_unknown_options_are_named_with_hints() -> None:
    fails("unknown read option.*'startOffsets'", startOffsets="earliest")
    fails("other kafka.\\* client settings do not apply", **{"kafka.group.id": "g"})
    fails("takes no path", path="/x")


def test_subscribe_pattern_and_assign() -> None:
    opts = parse_read_options({"bootstrap": "h:1", "subscribePattern": "ev.*"})
    assert isinstance(opts.subscription, SubscribePattern)
    assert opts.subscription.matches("events") and not opts.subscription.matches("xevents")
    fails("not a valid regular expression", base={"bootstrap": "h:1"}, subscribePattern="(")
    opts = parse_read_options({"bootstrap": "h:1", "assign": '{"b": [1, 0], "a": [2]}'})
    assert opts.subscription == Assign(
        (TopicPartition("a", 2), TopicPartition("b", 0), TopicPartition("b", 1))
    )
    for bad in ('["a"]', '{"a": []}', '{"a": [-1]}', '{"a": ["0"]}', "{", '{"a": [0, 0]}'):
        with pytest.raises(OptionError, match=r"assign"):
            parse_read_options({"bootstrap": "h:1", "assign": bad})


def test_subscribe_lists_must_be_clean() -> None:
    fails("comma-separated", subscribe="a,,b")
    fails("names a topic twice", subscribe="a,a")


def test_starting_offsets_json() -> None:
    opts = parse_read_options({**BASE, "startingOffsets": '{"events": {"0": 5, "1": -2}}'})
    assert opts.starting.kind == "offsets"
    assert dict(opts.starting.per_partition) == {
        TopicPartition("events", 0): 5,
        TopicPartition("events", 1): EARLIEST,
    }
    assert opts.starting.default == EARLIEST


def test_latest_start_is_refused_for_batch_only() -> None:
    fails("startingOffsets='latest' is not allowed for batch", startingOffsets="latest")
    fails("-1 \\(latest\\) is not allowed for batch", startingOffsets='{"events": {"0": -1}}')
    opts = parse_read_options({**BASE, "startingOffsets": '{"events": {"0": -1}}'}, streaming=True)
    assert dict(opts.starting.per_partition) == {TopicPartition("events", 0): LATEST}
    assert opts.starting.default == LATEST


def test_malformed_offsets_json_names_the_option_and_partition() -> None:
    fails("not valid JSON", startingOffsets="{oops")
    fails("must be 'earliest'", startingOffsets="first")
    fails(
        "partition 'x' of topic 'events' is not a partition number",
        startingOffsets='{"events": {"x": 1}}',
    )
    fails("offset of events-0 must be an integer >= 0", startingOffsets='{"events": {"0": -7}}')
    fails("offset of events-0", startingOffsets='{"events": {"0": "12"}}')
    fails("offset of events-0", startingOffsets='{"events": {"0": true}}')
    fails("must map to an object", startingOffsets='{"events": [1]}')


def test_ending_offsets() -> None:
    opts = parse_read_options({**BASE, "endingOffsets": '{"events": {"0": 100, "1": -1}}'})
    assert dict(opts.ending.per_partition) == {
        TopicPartition("events", 0): 100,
        TopicPartition("events", 1): LATEST,
    }
    assert opts.ending.default == LATEST
    fails("endingOffsets='earliest' is not allowed", endingOffsets="earliest")
    fails("-2 \\(earliest\\) is not allowed as an end", endingOffsets='{"events": {"0": -2}}')
    fails("cannot be used in streaming", streaming=True, endingOffsets="latest")


def test_timestamps() -> None:
    opts = parse_read_options({**BASE, "startingTimestamp": "1700000000000"})
    assert opts.starting.kind == "timestamp" and opts.starting.timestamp == 1700000000000
    opts = parse_read_options(
        {**BASE, "startingOffsetsByTimestamp": '{"events": {"0": 1700000000000}}'}
    )
    assert opts.starting.kind == "timestamps"
    opts = parse_read_options({**BASE, "endingTimestamp": "5"})
    assert opts.ending.kind == "timestamp"
    fails("give only one of startingOffsets", startingOffsets="earliest", startingTimestamp="1")
    fails("'startingTimestamp' must be at least 0", startingTimestamp="-5")
    fails(
        "timestamp of events-0 must be an integer >= 0",
        startingOffsetsByTimestamp='{"events": {"0": -1}}',
    )
    fails("'error' or 'latest'", startingOffsetsByTimestampStrategy="earliest")
    assert read(startingOffsetsByTimestampStrategy="LATEST").starting_timestamp_strategy == "latest"  # type: ignore[attr-defined]


def test_assign_must_cover_the_partitions_offsets_name() -> None:
    base = {"bootstrap": "h:1", "assign": '{"t": [0]}'}
    fails(
        "names partitions that are not assigned: t-1", base=base, startingOffsets='{"t": {"1": 0}}'
    )
    fails("not assigned: u-0", base=base, endingOffsets='{"u": {"0": 5}}')


def test_numbers_and_booleans() -> None:
    fails("'minPartitions' must be at least 1", minPartitions="0")
    fails("'maxRecordsPerPartition' must be an integer", maxRecordsPerPartition="lots")
    fails("'failOnDataLoss' must be 'true' or 'false'", failOnDataLoss="yes")
    fails("'maxOffsetsPerTrigger' must be at least 1", maxOffsetsPerTrigger="0")
    opts = parse_read_options({**BASE, "includeHeaders": "true", "maxOffsetsPerTrigger": "10"})
    assert opts.include_headers and opts.max_offsets_per_trigger == 10


def test_write_options() -> None:
    opts = parse_write_options({"bootstrap": "h:1", "topic": "out", "compression": "GZIP"})
    assert opts.topic == "out" and opts.compression == "gzip"
    assert parse_write_options({"bootstrap": "h:1"}).topic is None
    with pytest.raises(OptionError, match=r"'compression' must be one of"):
        parse_write_options({"bootstrap": "h:1", "compression": "zlib"})
    with pytest.raises(OptionError, match=r"unknown write option.*'subscribe'"):
        parse_write_options({"bootstrap": "h:1", "subscribe": "t"})
    with pytest.raises(OptionError, match=r"'bootstrap' .*is required"):
        parse_write_options({"topic": "t"})


def test_offsets_json_round_trips_and_is_stable() -> None:
    offsets = {TopicPartition("b", 10): 3, TopicPartition("b", 2): 7, TopicPartition("a", 0): 1}
    text = offsets_json(offsets)
    assert text == '{"a": {"0": 1}, "b": {"10": 3, "2": 7}}'
    as_dict = offsets_to_dict(offsets)
    assert list(as_dict["b"]) == ["2", "10"]  # partition order, not string order
    assert offsets_from_dict(as_dict) == offsets
    with pytest.raises(ValueError):
        offsets_from_dict({"a": {"x": 1}})


def test_a_streaming_sink_accepts_spark_s_checkpoint_location() -> None:
    raw = {"bootstrap": "h:1", "topic": "t", "checkpointLocation": "/tmp/c"}
    assert parse_write_options(raw, streaming=True).topic == "t"
    with pytest.raises(OptionError, match="unknown write option"):
        parse_write_options(raw)


def test_tls_files_and_a_sasl_login_are_options(tmp_path: Path) -> None:
    from rillet.broker.security.tls_certificates import LocalCa
    from rillet.client.sasl import SaslLogin

    ca = LocalCa(tmp_path)
    opts = parse_read_options(
        {
            **BASE,
            "ssl.cafile": str(ca.files.certfile),
            "SASL.username": "etl",
            "sasl.password": "pw",
        }
    )
    assert opts.security.ssl_cafile == str(ca.files.certfile)
    assert opts.security.sasl == SaslLogin("SCRAM-SHA-512", "etl", "pw")
    assert "ssl_context" in opts.security.client_options()
    plain = parse_write_options(
        {
            "bootstrap": "127.0.0.1:9092",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "a",
            "sasl.password": "b",
        }
    )
    assert plain.security.sasl == SaslLogin("PLAIN", "a", "b")
    assert parse_read_options(BASE).security.client_options() == {}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ssl.cafile": "/nonexistent/ca.pem"}, "options 'ssl.\\*': cannot use the TLS files"),
        ({"sasl.mechanism": "GSSAPI", "sasl.username": "a"}, "options 'sasl.\\*'"),
        ({"sasl.password": "pw"}, "username is empty"),
    ],
)
def test_unusable_security_options_fail_on_the_driver(
    options: dict[str, str], message: str
) -> None:
    with pytest.raises(OptionError, match=message):
        parse_read_options({**BASE, **options})
