"""Fetched record batches -> Arrow record batches in exactly the schema Spark expects.

Spark checks a data source's first Arrow batch against the schema it announced, type by type
and nullability included (``binary``, not ``large_binary``; ``int32`` for int;
``timestamp[us, tz=UTC]``), so the Arrow schema is built here once and every batch uses it.

Decoding is columnar: wire's record decoder returns a batch's records as columns (timestamp
deltas, keys, values, headers), which are handed to Arrow whole; offsets, timestamps, the
partition and the timestamp type are computed from the batch header by Arrow, without a
Python object per record. Records before the wanted start (a node returns whole batches)
and at or after the planned end are cut off; control batches carry no data records and are
skipped.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from rillet.client.errors import CorruptMessageError
from rillet.spark_io.range_reader import RangeTask, read_range_chunks
from rillet.spark_io.schema import TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME
from rillet.wire.batch import ATTR_CONTROL, ATTR_TIMESTAMP_LOG_APPEND, HEADER_SIZE, BatchHeader
from rillet.wire.compression import decompress
from rillet.wire.errors import CorruptBatch, WireError
from rillet.wire.record_codec import decode_records

HEADER_TYPE = pa.list_(
    pa.field("element", pa.struct([("key", pa.string()), ("value", pa.binary())]))
)
_TIMESTAMP = pa.timestamp("us", tz="UTC")
_BASE_FIELDS = [
    pa.field("key", pa.binary()),
    pa.field("value", pa.binary()),
    pa.field("topic", pa.string()),
    pa.field("partition", pa.int32()),
    pa.field("offset", pa.int64()),
    pa.field("timestamp", _TIMESTAMP),
    pa.field("timestampType", pa.int32()),
]
SCHEMA = pa.schema(_BASE_FIELDS)
SCHEMA_WITH_HEADERS = pa.schema([*_BASE_FIELDS, pa.field("headers", HEADER_TYPE)])


def arrow_schema(include_headers: bool) -> pa.Schema:
    return SCHEMA_WITH_HEADERS if include_headers else SCHEMA


def _int_array(values: array[int], kind: pa.DataType) -> pa.Array:
    """A non-null Arrow integer array sharing the memory of an ``array.array``."""
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(values)])


class RecordColumns:
    """Accumulates records of one partition, column by column, until ``take()``."""

    def __init__(self, topic: str, partition: int, include_headers: bool) -> None:
        self.topic = topic
        self.partition = partition
        self.include_headers = include_headers
        self._schema = arrow_schema(include_headers)
        self._topic_scalar = pa.scalar(topic, pa.string())
        self._partition_scalar = pa.scalar(partition, pa.int32())
        self._reset()

    def _reset(self) -> None:
        self._keys: list[bytes | None] = []
        self._values: list[bytes | None] = []
        self._deltas: list[int] = []
        self._bases: array[int] = array("q")
        self._offsets: array[int] = array("q")
        self._types: array[int] = array("i")
        self._headers: list[Any] = []
        self.rows = 0

    def add_batch(
        self, data: bytes | memoryview, position: int, header: BatchHeader, start: int, end: int
    ) -> int:
        """Add the records of the batch at ``position`` with ``start <= offset < end``;
        returns how many. Raises CorruptMessageError when its payload does not decode."""
        base = header.base_offset
        count = header.record_count
        lo = start - base if start > base else 0
        hi = end - base if end - base < count else count
        if lo >= hi or header.attributes & ATTR_CONTROL:
            return 0
        stored = data[position + HEADER_SIZE : position + header.size]
        try:
            deltas, keys, values, headers = decode_columns(
                decompress(header.compression, stored), count, self.include_headers
            )
        except WireError as exc:
            raise CorruptMessageError(
                f"corrupt batch at offset {base} of {self.topic}-{self.partition}: {exc}"
            ) from exc
        if lo or hi < count:
            deltas, keys, values, headers = (
                deltas[lo:hi],
                keys[lo:hi],
                values[lo:hi],
                headers[lo:hi],
            )
        n = hi - lo
        self._keys += keys
        self._values += values
        if header.attributes & ATTR_TIMESTAMP_LOG_APPEND:
            # Every record of the batch has the node's append time (Kafka's LogAppendTime).
            self._deltas += [0] * n
            self._bases += array("q", [header.max_timestamp_ms]) * n
            self._types += array("i", [TIMESTAMP_LOG_APPEND_TIME]) * n
        else:
            self._deltas += deltas
            self._bases += array("q", [header.first_timestamp_ms]) * n
            self._types += array("i", [TIMESTAMP_CREATE_TIME]) * n
        self._offsets += array("q", range(base + lo, base + hi))
        if self.include_headers:
            self._headers += headers
        self.rows += n
        return n

    def take(self) -> pa.RecordBatch:
        """The accumulated records as one Arrow batch (then starts empty again). Raises
        CorruptMessageError when a record field has the wrong type."""
        n = self.rows
        try:
            deltas = pa.array(self._deltas, pa.int64())
            if deltas.null_count:
                raise CorruptBatch("a record has a null timestamp delta")
            millis = pc.add(_int_array(self._bases, pa.int64()), deltas)
            arrays = [
                pa.array(self._keys, pa.binary()),
                pa.array(self._values, pa.binary()),
                pa.repeat(self._topic_scalar, n),
                pa.repeat(self._partition_scalar, n),
                _int_array(self._offsets, pa.int64()),
                pc.multiply(millis, 1000).cast(_TIMESTAMP),
                _int_array(self._types, pa.int32()),
            ]
            if self.include_headers:
                arrays.append(pa.array(self._headers, HEADER_TYPE))
        except (pa.ArrowInvalid, pa.ArrowTypeError, CorruptBatch) as exc:
            first = self._offsets[0] if self._offsets else -1
            raise CorruptMessageError(
                f"malformed record in {self.topic}-{self.partition} between offsets {first} "
                f"and {self._offsets[-1] if self._offsets else -1}: {exc}"
            ) from exc
        batch = pa.RecordBatch.from_arrays(arrays, schema=self._schema)
        self._reset()
        return batch


def decode_columns(
    payload: bytes | memoryview, count: int, with_headers: bool = True
) -> tuple[list[int], list[bytes | None], list[bytes | None], list[Any]]:
    """A batch's records as four columns: timestamp deltas, keys, values, headers (None or
    ``[(key, value), ...]`` per record; all None unless ``with_headers``). Raises
    CorruptBatch when the records do not decode."""
    deltas, keys, values, headers = decode_records(payload, count)
    if headers is None or not with_headers:
        return deltas, keys, values, [None] * count
    return deltas, keys, values, headers


def empty_batch(include_headers: bool) -> pa.RecordBatch:
    schema = arrow_schema(include_headers)
    return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in schema], schema=schema)


def rows_of(batches: Sequence[pa.RecordBatch]) -> int:
    return sum(b.num_rows for b in batches)


def read_arrow(task: RangeTask) -> Iterator[pa.RecordBatch]:
    """The records of ``task``'s range as Arrow batches (one per fetch response)."""
    columns = RecordColumns(task.topic, task.partition, task.include_headers)
    for chunk in read_range_chunks(task):
        for position, header in chunk.batches:
            columns.add_batch(chunk.data, position, header, chunk.offset, task.end)
        if columns.rows:
            yield columns.take()
