"""The timestamp policy a partition leader applies before appending (issue 16).

Far-future stamps pinned segments: CreateTime batches beyond the topic's window are refused.
Past stamps of any age are accepted by default, as Kafka (retention counts a segment's age
from its last write too, so they are not deleted at once); ``before.max.ms = -1`` opts in to
refusing stamps older than retention.ms. LogAppendTime batches are stamped with the leader's
clock (header and CRC only).
"""

from __future__ import annotations

import dataclasses

import pytest

from rillet.broker.config import NodeConfig
from rillet.broker.errors import TopicError
from rillet.broker.kafka.node_configs import broker_entries
from rillet.broker.replica.message_timestamps import InvalidTimestamp, apply_timestamp_policy
from rillet.broker.replica.topic_config import effective_log_config, validate_topic_configs
from rillet.partition_store.config import DAY_MS, HOUR_MS, LogConfig
from rillet.partition_store.errors import StoreConfigError
from rillet.wire.batch import (
    ATTR_TIMESTAMP_LOG_APPEND,
    build_batch,
    check_batch,
    decode_records,
    iter_batches,
    read_header,
)
from rillet.wire.compression import Compression

NOW = 1_800_000_000_000


def _batch(*timestamps: int) -> bytes:
    return build_batch([(ts, None, f"v{i}".encode(), None) for i, ts in enumerate(timestamps)])


def test_defaults_accept_any_past_stamp_and_refuse_an_hour_in_the_future() -> None:
    config = LogConfig()
    assert config.message_timestamp_before_max_ms == 2**63 - 1  # Kafka's default
    old = _batch(0, NOW)  # 1970
    assert apply_timestamp_policy(old, config, NOW) is old  # untouched, not copied
    with pytest.raises(InvalidTimestamp, match=r"after\.max\.ms"):
        apply_timestamp_policy(_batch(NOW, NOW + HOUR_MS + 1), config, NOW)
    fresh = _batch(NOW - DAY_MS, NOW + HOUR_MS)
    assert apply_timestamp_policy(fresh, config, NOW) is fresh


def test_describe_configs_reports_kafkas_default() -> None:
    entries = {e["name"]: e for e in broker_entries(NodeConfig(), None, False)}
    assert entries["log.message.timestamp.before.max.ms"]["value"] == str(2**63 - 1)


def test_minus_one_opts_in_to_refusing_what_retention_would_not_keep() -> None:
    config = LogConfig(message_timestamp_before_max_ms=-1)
    with pytest.raises(InvalidTimestamp, match=r"before\.max\.ms allows 604800000 ms"):
        apply_timestamp_policy(_batch(0), config, NOW)  # 1970
    # the first record counts too (a batch of old records with one fresh last record)
    with pytest.raises(InvalidTimestamp, match="batch 1"):
        apply_timestamp_policy(_batch(NOW) + _batch(5, NOW), config, NOW)


def test_before_max_minus_one_follows_retention() -> None:
    forever = LogConfig(retention_ms=-1, message_timestamp_before_max_ms=-1)
    old = _batch(0)
    assert apply_timestamp_policy(old, forever, NOW) is old  # nothing will delete it
    month = LogConfig(retention_ms=30 * DAY_MS, message_timestamp_before_max_ms=-1)
    ten_days_old = _batch(NOW - 10 * DAY_MS)
    assert apply_timestamp_policy(ten_days_old, month, NOW) is ten_days_old
    strict = dataclasses.replace(month, message_timestamp_before_max_ms=DAY_MS)
    with pytest.raises(InvalidTimestamp):
        apply_timestamp_policy(ten_days_old, strict, NOW)
    assert apply_timestamp_policy(old, LogConfig(retention_ms=DAY_MS), NOW) is old  # default


@pytest.mark.parametrize("compression", [Compression.NONE, Compression.GZIP])
def test_log_append_time_stamps_the_header_and_keeps_the_crc_valid(
    compression: Compression,
) -> None:
    config = LogConfig(message_timestamp_type="LogAppendTime")
    records = [(0, b"k", b"v1", None), (5, None, b"v2", [("h", b"x")])]
    original = build_batch(records, compression) + _batch(NOW + 10 * DAY_MS)  # any clock
    stamped = apply_timestamp_policy(original, config, NOW)
    assert isinstance(stamped, bytearray) and len(stamped) == len(original)
    views = list(iter_batches(stamped, config.max_batch_bytes))  # CRCs verify
    for view in views:
        assert view.header.attributes & ATTR_TIMESTAMP_LOG_APPEND
        assert view.header.max_timestamp_ms == NOW
        assert view.header.compression == read_header(original, view.position).compression
    first = decode_records(stamped, 0)
    assert [(r.timestamp_ms, r.value, r.headers) for r in first] == [
        (NOW, b"v1", []),
        (NOW, b"v2", [("h", b"x")]),
    ]


def test_log_append_time_never_recomputes_the_crc_of_a_damaged_batch() -> None:
    config = LogConfig(message_timestamp_type="LogAppendTime")
    damaged = bytearray(_batch(NOW))
    damaged[-2] ^= 0xFF
    out = apply_timestamp_policy(bytes(damaged), config, NOW)
    assert out == damaged  # unchanged: the append refuses it as corrupt
    with pytest.raises(Exception, match="crc"):
        check_batch(out, 0, len(out), config.max_batch_bytes)


def test_topic_configs_and_node_settings_are_checked() -> None:
    defaults = LogConfig()
    configs = validate_topic_configs(
        {
            "message.timestamp.type": "LogAppendTime",
            "message.timestamp.before.max.ms": "86400000",
            "message.timestamp.after.max.ms": "0",
        },
        defaults,
    )
    effective = effective_log_config(defaults, configs)
    assert effective.log_append_time
    assert effective.message_timestamp_before_max_ms == DAY_MS
    assert effective.message_timestamp_after_max_ms == 0
    with pytest.raises(TopicError, match=r"message\.timestamp\.type must be one of"):
        validate_topic_configs({"message.timestamp.type": "NowTime"}, defaults)
    with pytest.raises(TopicError):
        validate_topic_configs({"message.timestamp.after.max.ms": "-1"}, defaults)
    with pytest.raises(StoreConfigError):
        LogConfig(message_timestamp_type="createtime")
    with pytest.raises(StoreConfigError):
        LogConfig(message_timestamp_before_max_ms=-2)
