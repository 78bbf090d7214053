"""Turning a fetched record set into ConsumerRecords.

A node returns whole batches, so the first batch may begin before the fetch position: its
earlier records are skipped here. Each batch's CRC-32C is checked first when asked (the
default), so corruption anywhere between the producer and us becomes a CorruptMessageError,
never wrong data. A batch cut short at the end of the set (a node may stop at a byte limit) is
left for the next fetch, which starts at it.

Records are decoded with wire's record decoder (the one ``wire.batch.decode_records`` uses)
into columns when first taken, and built into ConsumerRecord tuples then (buffered_records):
building wire ``Record`` objects first would double the per-record cost on the consumer's
hot path. Control batches (transaction markers a Kafka
client may have written) hold no data records and are skipped; a LogAppendTime batch gives
every record its max timestamp, as Kafka's consumers do.
"""

from __future__ import annotations

from rillet.client.buffered_records import (
    NO_HEADERS,
    BufferedRecords,
    EncodedBatch,
    RecordColumns,
)
from rillet.client.committed_reads import committed_batches
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
from rillet.wire.messages import AbortedTransaction
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
    records: list[ConsumerRecord] = []
    while len(buffered):  # a take stops before a batch that fails; the next one raises
        records += buffered.take(len(buffered))
    return records, next_offset


def decode_record_columns(
    data: bytes | memoryview,
    topic: str,
    partition: int,
    fetch_offset: int,
    check_crcs: bool,
    aborted: list[AbortedTransaction] | None = None,
) -> tuple[BufferedRecords, int]:
    """As :func:`decode_record_set`, with each batch's records decoded only when first
    taken, and kept as columns until then (buffered_records: few record objects alive at
    once). The batches' framing and CRCs are checked here. With ``aborted`` (a
    read_committed fetch's aborted transactions), aborted transactions' batches are left
    out (committed_reads)."""
    where = f"{topic}-{partition}"
    batches, next_offset = whole_batches(data, fetch_offset, where, check_crcs)
    if aborted is not None:
        batches = committed_batches(data, batches, aborted, where)
    stored: list[RecordColumns | EncodedBatch] = []
    for position, h in batches:
        if h.attributes & ATTR_CONTROL:
            continue
        skip = fetch_offset - h.base_offset if h.base_offset < fetch_offset else 0
        if h.record_count - skip <= 0:
            continue
        body = data[position + HEADER_SIZE : position + h.size]
        stored.append(StoredBatch(h, body, skip, where))
    return BufferedRecords(topic, partition, stored), next_offset


class StoredBatch:
    """One checked batch as fetched, decoded when ``poll`` first reaches it."""

    __slots__ = ("_body", "_header", "_skip", "_where", "first_offset")

    def __init__(self, header: BatchHeader, body: bytes | memoryview, skip: int, where: str):
        self._header = header
        self._body = body  # the records section as stored (compressed or not)
        self._skip = skip  # records before the fetch position
        self._where = where
        self.first_offset = header.base_offset + skip

    def __len__(self) -> int:
        return self._header.record_count - self._skip

    def decode(self) -> RecordColumns:
        h = self._header
        try:
            deltas, keys, values, headers = decode_records(
                decompress(h.compression, self._body), h.record_count
            )
        except WireError as exc:
            raise CorruptMessageError(
                f"corrupt batch in {self._where} at offset {h.base_offset}: {exc}"
            ) from exc
        skip = self._skip
        if skip:
            deltas, keys, values = deltas[skip:], keys[skip:], values[skip:]
            headers = headers[skip:] if headers is not None else None
        # Whole columns by C iterators: no Python code runs per record here.
        timestamps: list[int] = (
            [h.max_timestamp_ms] * len(values)  # LogAppendTime: the node's append time
            if h.attributes & ATTR_TIMESTAMP_LOG_APPEND
            else list(map(h.first_timestamp_ms.__add__, deltas))
        )
        return RecordColumns(
            self.first_offset,
            timestamps,
            keys,
            values,
            None if headers is None else [NO_HEADERS if hs is None else hs for hs in headers],
        )
