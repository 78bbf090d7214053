"""kafka-python's record batch v2 code as an oracle: batches rillet builds read back through
kafka-python with identical records, and batches kafka-python builds read back through
rillet's decoders identically, for every codec. Uncompressed, the two builders agree byte
for byte on the records."""

from __future__ import annotations

import struct
from itertools import count

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords
from wire_helpers import Rec, records, recrc

from rillet.client.fetch_decoder import decode_record_set
from rillet.wire.batch import (
    ATTR_TIMESTAMP_LOG_APPEND,
    ATTR_TRANSACTIONAL,
    HEADER_SIZE,
    MAGIC,
    assign_offset_and_epoch,
    build_batch,
    check_batch,
    decode_records,
)
from rillet.wire.compression import Compression

MAX = 1 << 24
ORACLE = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
codecs = st.sampled_from(list(Compression))


def kafka_python_batch(
    recs: list[Rec],
    codec: Compression,
    producer: tuple[int, int, int] = (-1, -1, -1),
    transactional: bool = False,
) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=int(codec),
        is_transactional=transactional,
        producer_id=producer[0],
        producer_epoch=producer[1],
        base_sequence=producer[2],
        batch_size=1 << 30,
    )
    for i, (ts, key, value, headers) in enumerate(recs):
        assert builder.append(i, ts, key, value, list(headers or [])) is not None
    return bytes(builder.build())


def read_with_kafka_python(data: bytes) -> list[tuple[int, int, bytes | None, bytes | None, list]]:
    batches = MemoryRecords(data)
    out = []
    while (batch := batches.next_batch()) is not None:
        assert isinstance(batch, DefaultRecordBatch) and batch.magic == 2
        assert batch.validate_crc()
        out += [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in batch]
    return out


def expected(recs: list[Rec], base: int) -> list[tuple[int, int, bytes | None, bytes | None, list]]:
    return [(base + i, ts, k, v, list(h or [])) for i, (ts, k, v, h) in enumerate(recs)]


@ORACLE
@given(recs=records(), codec=codecs, base=st.integers(0, 2**50))
def test_kafka_python_reads_what_rillet_builds(
    recs: list[Rec], codec: Compression, base: int
) -> None:
    data = bytearray(build_batch(recs, codec, producer_id=9, producer_epoch=2, base_sequence=40))
    assign_offset_and_epoch(data, 0, base, 3)
    assert read_with_kafka_python(bytes(data)) == expected(recs, base)
    batch = DefaultRecordBatch(bytes(data))
    assert (batch.base_offset, batch.leader_epoch, batch.magic) == (base, 3, MAGIC)
    assert batch.compression_type == int(codec) and batch.records_count == len(recs)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (9, 2, 40)
    assert batch.first_timestamp == recs[0][0]
    assert batch.max_timestamp == max(r[0] for r in recs)


@ORACLE
@given(recs=records(), codec=codecs, base=st.integers(0, 2**50), txn=st.booleans())
def test_rillet_reads_what_kafka_python_builds(
    recs: list[Rec], codec: Compression, base: int, txn: bool
) -> None:
    data = bytearray(kafka_python_batch(recs, codec, (7, 1, 3), transactional=txn))
    assign_offset_and_epoch(data, 0, base, 0)
    header = check_batch(data, 0, len(data), MAX)  # what the node checks: header and CRC
    assert header.magic == MAGIC and header.record_count == len(recs)
    assert bool(header.attributes & ATTR_TRANSACTIONAL) == txn
    got = [(r.offset, r.timestamp_ms, r.key, r.value, r.headers) for r in decode_records(data)]
    assert got == expected(recs, base)
    # The consumer's own decoder (fetch path) agrees too.
    consumed, next_offset = decode_record_set(bytes(data), "t", 0, base, True)
    assert next_offset == base + len(recs)
    assert [(r.offset, r.timestamp_ms, r.key, r.value, list(r.headers)) for r in consumed] == (
        expected(recs, base)
    )


@ORACLE
@given(recs=records())
def test_uncompressed_records_are_byte_identical(recs: list[Rec]) -> None:
    ours = build_batch(recs)
    theirs = kafka_python_batch(recs, Compression.NONE)
    assert ours[HEADER_SIZE:] == theirs[HEADER_SIZE:]
    # Headers differ only in the leader epoch each builder leaves for the node to set.
    assert ours[:12] == theirs[:12] and ours[16:] == theirs[16:]


def test_many_records_and_every_codec_both_ways() -> None:
    recs: list[Rec] = [
        (1_700_000_000_000 + i // 7, None if i % 3 else b"k%d" % i, b"v" * (i % 700), None)
        for i in range(5000)
    ]
    for codec in Compression:
        ours = build_batch(recs, codec)
        assert read_with_kafka_python(ours) == expected(recs, 0)
        theirs = kafka_python_batch(recs, codec)
        got = [
            (r.offset, r.timestamp_ms, r.key, r.value, r.headers) for r in decode_records(theirs)
        ]
        assert got == expected(recs, 0)


def test_log_append_time_batches_give_every_record_the_max_timestamp() -> None:
    recs: list[Rec] = [(1000, None, b"a", None), (1005, None, b"b", None)]
    data = bytearray(kafka_python_batch(recs, Compression.NONE))
    # What a Kafka broker does for a LogAppendTime topic: set the bit and the max timestamp.
    fields = list(struct.unpack_from(">qiibIhiqqqhii", data))
    fields[5] |= ATTR_TIMESTAMP_LOG_APPEND
    fields[8] = 900  # the append time may be below the producer's first timestamp
    struct.pack_into(">qiibIhiqqqhii", data, 0, *fields)
    recrc(data)
    check_batch(data, 0, len(data), MAX)
    assert [r.timestamp for r in DefaultRecordBatch(bytes(data))] == [900, 900]
    consumed, _ = decode_record_set(bytes(data), "t", 0, 0, True)
    assert [r.timestamp_ms for r in consumed] == [900, 900]


def test_offsets_continue_across_kafka_python_batches() -> None:
    data = b""
    offsets = count()
    for n in (1, 3, 70):
        batch = bytearray(kafka_python_batch([(5, None, b"x", None)] * n, Compression.LZ4))
        assign_offset_and_epoch(batch, 0, next(offsets), 0)
        for _ in range(n - 1):
            next(offsets)
        data += batch
    consumed, next_offset = decode_record_set(data, "t", 0, 2, True)
    assert [r.offset for r in consumed] == list(range(2, 74)) and next_offset == 74


@pytest.mark.parametrize("codec", list(Compression))
def test_null_header_values_both_ways(codec: Compression) -> None:
    recs: list[Rec] = [(1, b"k", b"v", [("a", None), ("b", b""), ("c", b"x")])]
    assert read_with_kafka_python(build_batch(recs, codec)) == expected(recs, 0)
    theirs = decode_records(kafka_python_batch(recs, codec))
    assert theirs[0].headers == [("a", None), ("b", b""), ("c", b"x")]
