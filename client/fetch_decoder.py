"""Turning a fetched record set into ConsumerRecords.

A node returns whole batches, so the first batch may begin before the fetch position: its
earlier records are skipped here. Each batch's CRC-32C is checked first when asked (the
default), so corruption anywhere between the producer and us becomes a CorruptMessageError,
never wrong data. A batch cut short at the end of the set (a node may stop at a byte limit) is
left for the next fetch, which starts at it.

Records are decoded with wire's record decoder (the one ``wire.batch.decode_records`` uses)
into columns, and built into ConsumerRecord tuples only when taken (buffered_records):
building wire ``Record`` objects first would double the per-record cost on the consumer's
hot path. Control batches (transaction markers a Kafka
client may have written) hold no data records and are skipped; a LogAppendTime batch gives
every record its max timestamp, as Kafka's consumers do.
"""

from __future__ import annotations

from rillet.client.buffered_records import NO_HEADERS, BufferedRecords, RecordColumns
from rillet.client.errors import CorruptMessageError
from rillet.client.types import ConsumerRecord
from rillet.wire.batch import (
    ATTR_CONTROL,
    ATTR_TIMESTAMP_LOG_APPEND,
    HEADER_SIZE,
    LENGTH_PREFIX_SIZE,
    BatchHeader,
    check_batch,
    peek_length,
)
from rillet.wire.compression import decompress
from rillet.wire.errors import WireError
from rillet.wire.record_codec import decode_records

_NO_LIMIT = 1 << 62


def whole_batches(
    data: bytes | memoryview, fetch_offset: int, where: str, check_crcs: bool = True
) -> tuple[list[tuple[int, BatchHeader]], int]:
    """The checked batches of a record set that hold offsets >= ``fetch_offset`` (each with
    its byte position), and the offset after the last whole batch (``fetch_offset`` when there
    is none). A batch cut short at the end is left for the next fetch. Raises
    CorruptMessageError naming ``where`` and the offset.

    This is the one walk over fetched bytes: the consumer's decoding, range reads and the
    Spark reader's Arrow conversion all start from it.
    """
    batches: list[tuple[int, BatchHeader]] = []
    next_offset = fetch_offset
    position = 0
    end = len(data)
    try:
        while end - position >= LENGTH_PREFIX_SIZE:
            _, size = peek_length(data, position)
            if size > end - position and size >= HEADER_SIZE:
                break  # a batch cut short: it comes whole with the next fetch
            header = check_batch(data, position, end - position, _NO_LIMIT, check_crcs)
            if header.next_offset > fetch_offset:
                batches.append((position, header))
                next_offset = header.next_offset
            position += header.size
    except WireError as exc:
        raise CorruptMessageError(
            f"corrupt batch in {where} after offset {next_offset}: {exc}"
        ) from exc
    return batches, next_offset


def decode_record_set(
    data: bytes | memoryview,
    topic: str,
    partition: int,
    fetch_offset: int,
    check_crcs: bool,
) -> tuple[list[ConsumerRecord], int]:
    """Records at or after ``fetch_offset``, and the offset to fetch next.

    The next offset is the one after the last whole batch (``fetch_offset`` itself when the
    set holds no whole batch). Raises CorruptMessageError naming the partition and offset.
    """
    buffered, next_offset = decode_record_columns(data, topic, partition, fetch_offset, check_crcs)
    return buffered.take(len(buffered)), next_offset


def decode_record_columns(
    data: bytes | memoryview,
    topic: str,
    partition: int,
    fetch_offset: int,
    check_crcs: bool,
) -> tuple[BufferedRecords, int]:
    """As :func:`decode_record_set`, with the records kept as columns until taken
    (buffered_records: few record objects alive at once)."""
    where = f"{topic}-{partition}"
    batches, next_offset = whole_batches(data, fetch_offset, where, check_crcs)
    columns: list[RecordColumns] = []
    for position, h in batches:
        if h.attributes & ATTR_CONTROL:
            continue
        stored = data[position + HEADER_SIZE : position + h.size]
        try:
            deltas, keys, values, headers = decode_records(
                decompress(h.compression, stored), h.record_count
            )
        except WireError as exc:
            raise CorruptMessageError(
                f"corrupt batch in {where} at offset {h.base_offset}: {exc}"
            ) from exc
        skip = fetch_offset - h.base_offset if h.base_offset < fetch_offset else 0
        if skip:
            deltas, keys, values = deltas[skip:], keys[skip:], values[skip:]
            headers = headers[skip:] if headers is not None else None
        if not values:
            continue
        # Whole columns by C iterators: no Python code runs per record here.
        timestamps: list[int] = (
            [h.max_timestamp_ms] * len(values)  # LogAppendTime: the node's append time
            if h.attributes & ATTR_TIMESTAMP_LOG_APPEND
            else list(map(h.first_timestamp_ms.__add__, deltas))
        )
        columns.append(
            RecordColumns(
                h.base_offset + skip,
                timestamps,
                keys,
                values,
                None if headers is None else [NO_HEADERS if hs is None else hs for hs in headers],
            )
        )
    return BufferedRecords(topic, partition, columns), next_offset
