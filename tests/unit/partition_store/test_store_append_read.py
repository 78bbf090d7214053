"""Appending and reading: offsets, whole-batch reads, bounds, validation before any write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from store_batches import T0, batch, open_log, records_of, set_attributes

from rillet.partition_store.config import LogConfig
from rillet.partition_store.errors import (
    InvalidLeaderEpoch,
    InvalidRecords,
    LogClosed,
    NonContiguousAppend,
    OffsetOutOfRange,
    PartitionMismatch,
    RecordTooLarge,
    StoreConfigError,
)
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import (
    build_batch,
    decode_records,
    read_header,
)


def test_round_trip_assigns_contiguous_offsets_and_the_epoch(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    expected: list[tuple[int, bytes | None]] = []
    for i in range(60):
        values = [b"v%d-%d" % (i, j) for j in range(1 + i % 4)]
        result = log.append_as_leader(batch(values, ts=T0 + i), 7, T0)
        assert result.first_offset == len(expected)
        assert result.last_offset == len(expected) + len(values) - 1
        assert (result.batch_count, result.record_count) == (1, len(values))
        assert result.max_timestamp_ms == T0 + i
        expected += [(result.first_offset + j, v) for j, v in enumerate(values)]
    assert log.log_end_offset == len(expected)
    data = log.read_bytes(0, 1 << 20)
    assert records_of(data) == expected
    assert read_header(data).leader_epoch == 7
    assert log.latest_epoch == 7
    # timestamps and keys survive byte for byte
    first = decode_records(data)[0]
    assert (first.timestamp_ms, first.key) == (T0, None)


def test_many_batches_in_one_append_are_numbered_in_order(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(batch([b"a"]), 0, T0)
    request = batch([b"b", b"c"]) + batch([b"d"]) + batch([b"e", b"f", b"g"])
    result = log.append_as_leader(request, 0, T0)
    assert (result.first_offset, result.last_offset, result.batch_count) == (1, 6, 3)
    assert result.size_bytes == len(request)
    assert [o for o, _ in records_of(log.read_bytes(0, 1 << 20))] == list(range(7))


def test_read_from_the_middle_of_a_batch_returns_that_whole_batch(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    for i in range(10):
        log.append_as_leader(batch([b"%d" % i] * 4), 0, T0)
    result = log.read(22, 1 << 20)
    assert result.first_offset == 20 and result.region is not None
    assert records_of(log.read_bytes(22, 1 << 20))[0][0] == 20


def test_max_offset_stops_before_batches_reaching_it(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    for _ in range(10):
        log.append_as_leader(batch([b"x"] * 3), 0, T0)
    assert [o for o, _ in records_of(log.read_bytes(0, 1 << 20, max_offset=6))] == list(range(6))
    # a batch straddling the high watermark holds uncommitted records: it is withheld
    assert [o for o, _ in records_of(log.read_bytes(0, 1 << 20, max_offset=7))] == list(range(6))
    assert log.read(6, 1 << 20, max_offset=7).region is None
    assert log.read(6, 1 << 20, max_offset=6) == log.read(6, 1 << 20, max_offset=5)
    assert log.read(6, 1 << 20, max_offset=6).first_offset == 6


def test_max_bytes_returns_whole_batches_and_min_one_batch_returns_the_first(
    tmp_path: Path,
) -> None:
    log = open_log(tmp_path / "t-0", index_interval_bytes=300)
    sizes = []
    for _ in range(40):
        sizes.append(log.append_as_leader(batch([bytes(100)] * 3), 0, T0).size_bytes)
    size = sizes[0]
    for max_bytes in (size, size + 1, 2 * size - 1, 2 * size, 7 * size + 5, 25 * size):
        region = log.read(0, max_bytes).region
        assert region is not None and region.length == (max_bytes // size) * size
    region = log.read(3, 10).region  # KIP-74: smaller than a batch, still one whole batch
    assert region is not None and region.length == size
    assert log.read(3, 10, min_one_batch=False).region is None
    assert log.read(3, 0, min_one_batch=False).region is None
    region = log.read(3, size * 2 + 10, max_offset=9).region
    assert region is not None and region.length == size * 2  # offsets 3..8


def test_fetching_at_the_log_end_returns_nothing_and_beyond_it_raises(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    assert log.read(0, 100).region is None
    with pytest.raises(OffsetOutOfRange):
        log.read(1, 100)
    log.append_as_leader(batch([b"a", b"b"]), 0, T0)
    result = log.read(2, 100)
    assert result.region is None and result.first_offset == 2
    assert log.read_bytes(2, 100) == b""
    with pytest.raises(OffsetOutOfRange) as info:
        log.read(3, 100)
    assert (info.value.log_start_offset, info.value.log_end_offset) == (0, 2)
    with pytest.raises(OffsetOutOfRange):
        log.read(-1, 100)


def test_read_region_is_the_same_bytes_as_read_bytes(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_bytes=1000)
    for i in range(30):
        log.append_as_leader(batch([b"%d" % i] * 5), 0, T0)
    for offset in range(0, 150, 7):
        region = log.read(offset, 400).region
        assert region is not None
        assert os.pread(region.fd, region.length, region.position) == log.read_bytes(offset, 400)


def test_invalid_appends_write_nothing(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", max_batch_bytes=512)
    log.append_as_leader(batch([b"first"]), 0, T0)
    size_before = log.size_bytes
    good = batch([b"ok"])
    bad_crc = bytearray(batch([b"bad"]))
    bad_crc[-2] ^= 1
    cases: list[tuple[bytes, type[Exception]]] = [
        (good + bytes(bad_crc), InvalidRecords),
        (good + batch([bytes(600)]), RecordTooLarge),  # too large, and not the first batch
        (b"", InvalidRecords),
        (good + b"\x00" * 20, InvalidRecords),  # trailing garbage
        (good[:-1], InvalidRecords),  # torn
    ]
    for records, error in cases:
        with pytest.raises(error):
            log.append_as_leader(records, 0, T0)
    assert (log.log_end_offset, log.size_bytes) == (1, size_before)


@pytest.mark.parametrize("magic", [0, 1, 3, -1])
def test_only_record_batch_v2_is_accepted(tmp_path: Path, magic: int) -> None:
    log = open_log(tmp_path / "t-0")
    old = bytearray(batch([b"v"]))
    old[16] = magic & 0xFF  # the magic byte (int8) is not covered by the CRC
    with pytest.raises(InvalidRecords, match=f"magic {magic} is not 2"):
        log.append_as_leader(bytes(old), 0, T0)
    assert log.log_end_offset == 0


@pytest.mark.parametrize("attributes", [0x08, 0x10, 0x18, 0x05, 0x07, -0x40])
def test_attribute_bits_alone_never_refuse_a_batch(tmp_path: Path, attributes: int) -> None:
    """LogAppendTime and transactional bits, and codecs this build cannot even decode: the
    log stores batches as sent (it never decodes records). Only the control bit is refused
    (below): markers come from the transaction coordinator."""
    log = open_log(tmp_path / "t-0")
    raw = bytearray(batch([b"v", b"w"]))
    set_attributes(raw, attributes)
    log.append_as_leader(bytes(raw), 0, T0)
    assert log.log_end_offset == 2
    assert read_header(log.read_bytes(0, 1000)).attributes == attributes


@pytest.mark.parametrize("attributes", [0x20, 0x30, 0x38])
def test_producers_cannot_append_control_batches(tmp_path: Path, attributes: int) -> None:
    log = open_log(tmp_path / "t-0")
    raw = bytearray(batch([b"v"]))
    set_attributes(raw, attributes)
    with pytest.raises(InvalidRecords, match="control batches"):
        log.append_as_leader(bytes(raw), 0, T0)
    assert log.log_end_offset == 0


def test_offsets_are_garbage_in_produced_batches_and_replaced(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    raw = bytearray(batch([b"a"]))
    raw[0:8] = (123456).to_bytes(8, "big")  # producers send base_offset 0, but anything goes
    log.append_as_leader(bytes(raw), 0, T0)
    assert read_header(log.read_bytes(0, 100)).base_offset == 0


def test_leader_epochs_never_go_backwards(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(batch([b"a"]), 3, T0)
    with pytest.raises(InvalidLeaderEpoch):
        log.append_as_leader(batch([b"b"]), 2, T0)
    with pytest.raises(InvalidLeaderEpoch):
        open_log(tmp_path / "t-1").append_as_leader(batch([b"b"]), -1, T0)
    log.append_as_leader(batch([b"c"]), 4, T0)
    assert log.latest_epoch == 4 and log.log_end_offset == 2


def test_follower_appends_must_continue_the_log(tmp_path: Path) -> None:
    leader = open_log(tmp_path / "l")
    for i in range(5):
        leader.append_as_leader(batch([b"%d" % i, b"x"]), i // 2, T0)
    follower = open_log(tmp_path / "f", max_batch_bytes=128)  # smaller limit than the leader
    follower.append_as_follower(leader.read_bytes(0, 40), T0)
    assert follower.log_end_offset == 2
    with pytest.raises(NonContiguousAppend):
        follower.append_as_follower(leader.read_bytes(4, 1 << 20), T0)  # gap
    with pytest.raises(NonContiguousAppend):
        follower.append_as_follower(leader.read_bytes(0, 1 << 20), T0)  # overlap
    follower.append_as_follower(leader.read_bytes(2, 1 << 20), T0)
    assert follower.read_bytes(0, 1 << 20) == leader.read_bytes(0, 1 << 20)
    assert follower.latest_epoch == 2
    big = build_batch([(T0, None, bytes(300), None)])
    leader.append_as_leader(big, 2, T0)
    follower.append_as_follower(leader.read_bytes(10, 1 << 20), T0)  # over 128 bytes: fine
    assert follower.log_end_offset == 11


def test_follower_rejects_a_lowered_epoch(tmp_path: Path) -> None:
    a = open_log(tmp_path / "a")
    a.append_as_leader(batch([b"x"]), 5, T0)
    b = open_log(tmp_path / "b")
    b.append_as_leader(batch([b"y"]), 4, T0)
    b.append_as_leader(batch([b"z"]), 4, T0)
    follower = open_log(tmp_path / "f")
    follower.append_as_follower(a.read_bytes(0, 100), T0)
    with pytest.raises(InvalidLeaderEpoch):
        follower.append_as_follower(b.read_bytes(1, 100), T0)


def test_a_closed_log_refuses_work(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.close()
    log.close()  # idempotent
    with pytest.raises(LogClosed):
        log.append_as_leader(batch([b"a"]), 0, T0)
    with pytest.raises(LogClosed):
        log.read(0, 10)


def test_partition_meta_guards_the_directory_identity(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    open_log(directory).close()
    meta = (directory / "partition.meta").read_text()
    assert "topic=t\n" in meta and "partition=0\n" in meta and f"created_ms={T0}" in meta
    with pytest.raises(PartitionMismatch):
        PartitionLog.open(directory, LogConfig(), T0, "other", 0)
    with pytest.raises(PartitionMismatch):
        PartitionLog.open(directory, LogConfig(), T0, "t", 1)
    (directory / "partition.meta").write_bytes(b"\xff garbage")  # unreadable: rewritten
    PartitionLog.open(directory, LogConfig(), T0, "t", 0).close()
    assert "topic=t\n" in (directory / "partition.meta").read_text()


def test_config_is_validated() -> None:
    for bad in (
        {"segment_bytes": 10},
        {"segment_bytes": 1 << 31},
        {"segment_ms": 0},
        {"retention_ms": -2},
        {"retention_bytes": -2},
        {"index_interval_bytes": -1},
        {"max_batch_bytes": 1},
        {"flush_messages": 0},
        {"flush_ms": -5},
        {"file_delete_delay_ms": -1},
    ):
        with pytest.raises(StoreConfigError):
            LogConfig(**bad)
    with pytest.raises(ValueError):  # StoreConfigError is a ValueError for config loaders
        LogConfig(flush_messages=0)
    assert LogConfig().max_batch_bytes == (1 << 20) + 1024
