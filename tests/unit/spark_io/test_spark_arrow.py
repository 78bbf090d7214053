"""Fetched batches -> Arrow: the exact schema Spark checks, cut at the range's ends."""

from __future__ import annotations

import struct

import crc32c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

from rillet.client.errors import CorruptMessageError  # noqa: E402
from rillet.client.fetch_decoder import whole_batches  # noqa: E402
from rillet.spark_io.arrow_records import (  # noqa: E402
    SCHEMA,
    SCHEMA_WITH_HEADERS,
    RecordColumns,
    arrow_schema,
    empty_batch,
)
from rillet.spark_io.schema import column_names, schema_ddl  # noqa: E402
from rillet.wire.batch import (  # noqa: E402
    ATTR_CONTROL,
    ATTR_TIMESTAMP_LOG_APPEND,
    CRC_OFFSET,
    CRC_START,
    HEADER,
    HEADER_SIZE,
    assign_offset_and_epoch,
    build_batch,
    encode_batch_from_payload,
    read_header,
)
from rillet.wire.compression import Compression  # noqa: E402
from rillet.wire.record_codec import encode_record  # noqa: E402

T0 = 1_700_000_000_000


def batch(base: int, n: int, ts: int = T0, compression: Compression = Compression.NONE) -> bytes:
    records = [
        (
            ts + i,
            None if i % 3 == 0 else f"k{base + i}".encode(),
            f"v{base + i}".encode(),
            [("h", f"{base + i}".encode())] if i % 2 else None,
        )
        for i in range(n)
    ]
    raw = bytearray(build_batch(records, compression))
    assign_offset_and_epoch(raw, 0, base, 0)
    return bytes(raw)


def decode(data: bytes, start: int, end: int, headers: bool = True) -> pa.RecordBatch:
    cols = RecordColumns("t", 3, headers)
    batches, _ = whole_batches(data, start, "t-3")
    for position, header in batches:
        cols.add_batch(data, position, header, start, end)
    return cols.take()


def test_schema_matches_the_ddl_columns() -> None:
    assert SCHEMA.names == column_names(False)
    assert SCHEMA_WITH_HEADERS.names == column_names(True)
    assert "`headers` array<struct<key: string, value: binary>>" in schema_ddl(True)
    assert arrow_schema(False) is SCHEMA


def test_the_schema_is_what_spark_expects() -> None:
    pytest.importorskip("pyspark")
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import _parse_datatype_string  # noqa: F401 (needs a JVM)

    from rillet.spark_io.datasource import _expected_struct

    for headers in (False, True):
        struct = _struct(_expected_struct(headers))
        assert to_arrow_schema(struct, timezone="UTC").equals(arrow_schema(headers))


def _struct(simple: str) -> object:
    """Build the StructType for our simpleString by hand (parsing DDL needs a JVM)."""
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    kinds = {
        "binary": BinaryType(),
        "string": StringType(),
        "int": IntegerType(),
        "bigint": LongType(),
        "timestamp": TimestampType(),
        "array<struct<key:string,value:binary>>": ArrayType(
            StructType([StructField("key", StringType()), StructField("value", BinaryType())])
        ),
    }
    inner = simple.removeprefix("struct<").removesuffix(">")
    fields = []
    for part in inner.replace("array<struct<key:string,value:binary>>", "HEADERS").split(","):
        name, kind = part.split(":", 1)
        kind = "array<struct<key:string,value:binary>>" if kind == "HEADERS" else kind
        fields.append(StructField(name, kinds[kind]))
    return StructType(fields)


def test_records_become_columns() -> None:
    data = batch(100, 5) + batch(105, 3, ts=T0 + 1000)
    out = decode(data, 100, 108)
    assert out.schema.equals(SCHEMA_WITH_HEADERS)
    rows = out.to_pylist()
    assert [r["offset"] for r in rows] == list(range(100, 108))
    assert rows[0]["key"] is None and rows[1]["key"] == b"k101"
    assert [r["value"] for r in rows][:2] == [b"v100", b"v101"]
    assert {r["topic"] for r in rows} == {"t"} and {r["partition"] for r in rows} == {3}
    assert rows[1]["timestamp"].timestamp() * 1000 == pytest.approx(T0 + 1)
    assert rows[5]["timestamp"].timestamp() * 1000 == pytest.approx(T0 + 1000)
    assert {r["timestampType"] for r in rows} == {0}
    assert rows[0]["headers"] is None
    assert rows[1]["headers"] == [{"key": "h", "value": b"101"}]


def test_records_outside_the_range_are_cut_off() -> None:
    data = batch(100, 10) + batch(110, 10)
    out = decode(data, 103, 114)
    assert out.column("offset").to_pylist() == list(range(103, 114))
    assert decode(data, 120, 130).num_rows == 0


def test_compressed_batches_and_no_headers_column() -> None:
    data = batch(0, 50, compression=Compression.ZSTD)
    out = decode(data, 0, 50, headers=False)
    assert out.schema.equals(SCHEMA)
    assert out.column("value").to_pylist()[49] == b"v49"


def test_log_append_time_and_control_batches() -> None:
    payload = encode_record(0, 0, None, b"a", None) + encode_record(1, 5, None, b"b", None)
    appended = bytearray(
        encode_batch_from_payload(
            payload,
            record_count=2,
            first_timestamp_ms=T0,
            max_timestamp_ms=T0 + 99,
            attributes=ATTR_TIMESTAMP_LOG_APPEND,
        )
    )
    control = bytearray(
        encode_batch_from_payload(
            encode_record(0, 0, None, b"marker", None),
            record_count=1,
            first_timestamp_ms=T0,
            max_timestamp_ms=T0,
            attributes=ATTR_CONTROL,
        )
    )
    assign_offset_and_epoch(appended, 0, 0, 0)
    assign_offset_and_epoch(control, 0, 2, 0)
    data = bytes(appended) + bytes(control) + batch(3, 1)
    out = decode(data, 0, 4)
    assert out.column("offset").to_pylist() == [0, 1, 3]  # the control record is not data
    assert out.column("timestampType").to_pylist() == [1, 1, 0]
    stamps = [t.timestamp() * 1000 for t in out.column("timestamp").to_pylist()[:2]]
    assert stamps == [pytest.approx(T0 + 99)] * 2


def test_scan_skips_earlier_batches_and_leaves_a_cut_batch() -> None:
    data = batch(0, 5) + batch(5, 5) + batch(10, 5)
    found, next_offset = whole_batches(data, 6, "t-0")
    assert [h.base_offset for _, h in found] == [5, 10] and next_offset == 15
    found, next_offset = whole_batches(data[:-10], 6, "t-0")
    assert [h.base_offset for _, h in found] == [5] and next_offset == 10
    assert whole_batches(b"", 7, "t-0") == ([], 7)


def test_corruption_is_detected() -> None:
    raw = bytearray(batch(0, 5))
    raw[-3] ^= 0xFF
    with pytest.raises(CorruptMessageError, match="t-0"):
        whole_batches(bytes(raw), 0, "t-0")
    # A CRC-valid batch whose payload is not records still fails, naming the partition.
    bad = bytearray(
        encode_batch_from_payload(
            b"\x81\x01", record_count=1, first_timestamp_ms=0, max_timestamp_ms=0
        )
    )
    assert HEADER.size == len(bad) - 2 and CRC_OFFSET > 0
    cols = RecordColumns("t", 0, False)
    with pytest.raises(CorruptMessageError, match="t-0"):
        cols.add_batch(bytes(bad), 0, read_header(bad), 0, 10)


def test_empty_batch_has_the_schema() -> None:
    assert empty_batch(True).schema.equals(SCHEMA_WITH_HEADERS)
    assert empty_batch(False).num_rows == 0


def test_records_that_do_not_add_up_are_corrupt() -> None:
    # A record whose length claims one byte more than its fields take.
    record = encode_record(0, 0, None, b"v", None)
    payload = bytes([record[0] + 2]) + record[1:] + b"\x00"
    raw = bytearray(
        encode_batch_from_payload(payload, record_count=1, first_timestamp_ms=0, max_timestamp_ms=0)
    )
    with pytest.raises(CorruptMessageError, match="corrupt batch at offset 0 of t-0"):
        RecordColumns("t", 0, False).add_batch(bytes(raw), 0, read_header(raw), 0, 10)


def test_null_header_values_reach_arrow() -> None:
    raw = bytearray(build_batch([(T0, None, b"v", [("a", None), ("b", b"x")])]))
    assign_offset_and_epoch(raw, 0, 0, 0)
    out = decode(bytes(raw), 0, 1)
    assert out.column("headers").to_pylist() == [
        [{"key": "a", "value": None}, {"key": "b", "value": b"x"}]
    ]


@settings(max_examples=300, deadline=None)
@given(which=st.sampled_from(list(Compression)), data=st.data())
def test_crc_valid_batches_with_mutated_records_are_corrupt_messages(
    which: Compression, data: st.DataObject
) -> None:
    """Spark's decoder on what a buggy producer could send (right CRC, wrong records):
    CorruptMessageError or correct rows, nothing else."""
    good = batch(0, 70, compression=which)
    body = bytearray(good[HEADER_SIZE:])
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(body) - 1))
        body[i] = data.draw(st.integers(0, 255))
    raw = bytearray(good[:HEADER_SIZE] + bytes(body))
    struct.pack_into(">I", raw, CRC_OFFSET, crc32c.crc32c(raw[CRC_START:]))
    cols = RecordColumns("t", 0, True)
    try:
        cols.add_batch(bytes(raw), 0, read_header(raw), 0, 100)
        cols.take()
    except CorruptMessageError:
        pass


def test_a_header_with_a_null_value_reads_as_null() -> None:
    """Kafka allows a header without a value; the row shows it as a null ``value``."""
    raw = bytearray(build_batch([(T0, b"k", b"v", [("trace", None), ("h", b"x")])]))
    assign_offset_and_epoch(raw, 0, 0, 0)
    rows = decode(bytes(raw), 0, 1).to_pylist()
    assert rows[0]["headers"] == [{"key": "trace", "value": None}, {"key": "h", "value": b"x"}]
