"""Record batch: Kafka's record batch v2 (magic 2), the one format on disk and on the wire.

Header (big-endian, 61 bytes), then the records (wire.record_codec), compressed as a whole
when the attributes name a codec (wire.compression)::

    base_offset int64 | batch_length int32 | leader_epoch int32 | magic int8 | crc uint32 |
    attributes int16 | last_offset_delta int32 | first_timestamp_ms int64 |
    max_timestamp_ms int64 | producer_id int64 | producer_epoch int16 | base_sequence int32 |
    record_count int32 | records

``batch_length`` counts the bytes after its own field, so a batch occupies
``12 + batch_length`` bytes. The CRC-32C covers everything after the crc field, which lets the
leader assign ``base_offset`` and ``leader_epoch`` in place without recomputing it.

Attributes: bits 0-2 the compression codec, bit 3 LogAppendTime, bit 4 transactional, bit 5
control batch. Batches from any Kafka client are stored as sent: the node checks the header
and the CRC, never the records, and no attribute bit alone makes it refuse a batch.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import crc32c

from rillet.wire.compression import CODEC_MASK, Compression, compress, decompress
from rillet.wire.errors import CorruptBatch
from rillet.wire.record_codec import NO_HEADERS, HeaderPairs, encode_record
from rillet.wire.record_codec import decode_records as decode_record_fields
from rillet.wire.varint import ENCODED, TABLE_SIZE

MAGIC = 2
HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
LENGTH_PREFIX_SIZE = 12  # base_offset + batch_length
CRC_OFFSET = 17
CRC_START = 21  # first byte covered by the CRC (attributes)
MIN_BATCH_SIZE = HEADER_SIZE + 1  # at least one byte of (possibly compressed) records
# A batch the log cleaner left without records: a header only, record_count 0, its
# last_offset_delta still spanning the offsets it covered (Kafka's empty batches).
EMPTY_BATCH_SIZE = HEADER_SIZE

_BASE_AND_LENGTH = struct.Struct(">qi")
_CRC = struct.Struct(">I")
_BASE_OFFSET = struct.Struct(">q")
_LEADER_EPOCH = struct.Struct(">i")
_LEADER_EPOCH_OFFSET = 12
_MAX_TS_OFFSET = 35
_ATTRIBUTES = struct.Struct(">h")
_TIMESTAMPS = struct.Struct(">qq")  # first_timestamp_ms, max_timestamp_ms
_FIRST_TS_OFFSET = 27
_CRC = struct.Struct(">I")

ATTR_TIMESTAMP_LOG_APPEND = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
# KIP-534: first_timestamp_ms holds the time after which the cleaner may drop this batch's
# tombstones; record timestamps stay relative to it.
ATTR_DELETE_HORIZON = 0x40

NO_PRODUCER_ID = -1
NO_SEQUENCE = -1


class BatchHeader(NamedTuple):
    """Decoded fixed header of one batch."""

    base_offset: int
    batch_length: int
    leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    first_timestamp_ms: int
    max_timestamp_ms: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def size(self) -> int:
        """Bytes the whole batch occupies."""
        return LENGTH_PREFIX_SIZE + self.batch_length

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def compression(self) -> int:
        return self.attributes & CODEC_MASK


class BatchView(NamedTuple):
    """A batch located inside a larger buffer."""

    position: int
    header: BatchHeader


@dataclass(frozen=True, slots=True)
class Record:
    """A record as read back from a batch, with its absolute offset."""

    offset: int
    timestamp_ms: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]


def read_header(buf: bytes | bytearray | memoryview, position: int = 0) -> BatchHeader:
    """Parse the fixed header at ``position``; no CRC check."""
    if len(buf) - position < HEADER_SIZE:
        raise CorruptBatch("buffer too short for a batch header")
    return BatchHeader._make(HEADER.unpack_from(buf, position))


def peek_length(buf: bytes | bytearray | memoryview, position: int = 0) -> tuple[int, int]:
    """(base_offset, total size) of the batch at ``position`` from its first 12 bytes."""
    if len(buf) - position < LENGTH_PREFIX_SIZE:
        raise CorruptBatch("buffer too short for a batch length")
    base, length = _BASE_AND_LENGTH.unpack_from(buf, position)
    return base, LENGTH_PREFIX_SIZE + length


def check_batch(
    buf: bytes | bytearray | memoryview,
    position: int,
    available: int,
    max_batch_bytes: int,
    verify_crc: bool = True,
) -> BatchHeader:
    """Validate the batch at ``position`` whose bytes end at most at ``position + available``.

    Raises CorruptBatch when the batch is truncated, oversized, not magic 2, internally
    inconsistent, or fails its CRC. The attribute bits are not judged here.
    """
    if available < HEADER_SIZE:
        raise CorruptBatch(f"{available} bytes cannot hold a batch header")
    header = read_header(buf, position)
    size = header.size
    empty = header.record_count == 0
    if header.batch_length < (EMPTY_BATCH_SIZE if empty else MIN_BATCH_SIZE) - LENGTH_PREFIX_SIZE:
        raise CorruptBatch(f"batch_length {header.batch_length} is too small")
    if size > max_batch_bytes:
        raise CorruptBatch(f"batch of {size} bytes exceeds the limit of {max_batch_bytes}")
    if size > available:
        raise CorruptBatch(f"batch of {size} bytes is truncated at {available} bytes")
    if header.magic != MAGIC:
        raise CorruptBatch(f"batch magic {header.magic} is not {MAGIC} (record batch v2)")
    if empty:
        if header.last_offset_delta < 0 or size != EMPTY_BATCH_SIZE:
            raise CorruptBatch(
                "record_count 0 and last_offset_delta disagree: an empty batch is a bare "
                "header covering at least one offset"
            )
    elif header.record_count < 1 or header.last_offset_delta != header.record_count - 1:
        raise CorruptBatch("record_count and last_offset_delta disagree")
    if header.max_timestamp_ms < header.first_timestamp_ms and not header.attributes & (
        ATTR_TIMESTAMP_LOG_APPEND | ATTR_DELETE_HORIZON
    ):
        # A LogAppendTime batch carries the append time as its max timestamp, which may be
        # below the producer's first timestamp; a delete horizon lies after every record.
        raise CorruptBatch("max_timestamp_ms is below first_timestamp_ms")
    if verify_crc:
        mv = memoryview(buf)[position + CRC_START : position + size]
        actual = crc32c.crc32c(mv)
        if actual != header.crc:
            raise CorruptBatch(f"crc mismatch: stored {header.crc:#010x}, computed {actual:#010x}")
    return header


def iter_batches(
    buf: bytes | bytearray | memoryview,
    max_batch_bytes: int,
    verify_crc: bool = True,
) -> Iterator[BatchView]:
    """Yield every batch in ``buf``; raise CorruptBatch at the first invalid one.

    ``buf`` must hold whole batches only (a produce request's record set, a fetched range).
    """
    position = 0
    end = len(buf)
    while position < end:
        header = check_batch(buf, position, end - position, max_batch_bytes, verify_crc)
        yield BatchView(position, header)
        position += header.size


def valid_prefix(
    buf: bytes | bytearray | memoryview, max_batch_bytes: int
) -> tuple[int, list[BatchView]]:
    """Length of the longest prefix of whole, CRC-valid batches, and those batches.

    Used by log recovery: everything after the returned length is a torn or corrupt tail.
    """
    batches: list[BatchView] = []
    position = 0
    end = len(buf)
    while position < end:
        try:
            header = check_batch(buf, position, end - position, max_batch_bytes)
        except CorruptBatch:
            break
        batches.append(BatchView(position, header))
        position += header.size
    return position, batches


def assign_offset_and_epoch(buf: bytearray, position: int, base_offset: int, epoch: int) -> None:
    """Set the leader-owned header fields in place (outside the CRC's coverage)."""
    _BASE_OFFSET.pack_into(buf, position, base_offset)
    _LEADER_EPOCH.pack_into(buf, position + _LEADER_EPOCH_OFFSET, epoch)


def stamp_log_append_time(buf: bytearray, position: int, timestamp_ms: int) -> None:
    """LogAppendTime: mark the batch at ``position`` and set its first and max timestamps to
    the leader's clock, then recompute its CRC (these fields are under it). Once per batch;
    the records stay as the producer encoded them and report the batch's max timestamp.
    The caller has checked the batch's CRC: a recomputed CRC must not hide damage."""
    attributes = _ATTRIBUTES.unpack_from(buf, position + CRC_START)[0]
    _ATTRIBUTES.pack_into(buf, position + CRC_START, attributes | ATTR_TIMESTAMP_LOG_APPEND)
    _TIMESTAMPS.pack_into(buf, position + _FIRST_TS_OFFSET, timestamp_ms, timestamp_ms)
    size = LENGTH_PREFIX_SIZE + _BASE_AND_LENGTH.unpack_from(buf, position)[1]
    crc = crc32c.crc32c(memoryview(buf)[position + CRC_START : position + size])
    _CRC.pack_into(buf, position + CRC_OFFSET, crc)


def decode_records(buf: bytes | bytearray | memoryview, position: int = 0) -> list[Record]:
    """Decode the records of the batch at ``position``; the caller has checked its CRC."""
    header = read_header(buf, position)
    start = position + HEADER_SIZE
    stored = memoryview(buf)[start : position + header.size]
    columns = decode_record_fields(decompress(header.compression, stored), header.record_count)
    base_off = header.base_offset
    headers = columns.headers or [None] * header.record_count
    if header.attributes & ATTR_TIMESTAMP_LOG_APPEND:  # every record has the append time
        timestamps = [header.max_timestamp_ms] * header.record_count
    else:
        base_ts = header.first_timestamp_ms
        timestamps = [base_ts + delta for delta in columns.timestamp_deltas_ms]
    return [
        Record(base_off + i, ts, key, value, hs or [])
        for i, (ts, key, value, hs) in enumerate(
            zip(timestamps, columns.keys, columns.values, headers, strict=True)
        )
    ]


# The common record shapes (no headers, a timestamp within 8191 ms of the batch's first,
# fewer than 2**20 records, a value and key under 8 KiB) are encoded from these tables, as pieces
# of one list joined once in build(): length | attributes + timestamp delta | offset delta
# (+ null key) | [key length | key] | value length | value | header count 0. Joining many
# small pieces once is cheaper in Python than concatenating them per record.
_ATTR_AND_DELTA = [b"\x00" + ENCODED[d] for d in range(64)]
NULL_KEY = b"\x01"  # a null key's length, -1, as a zigzag varint
_OFFSET_AND_NULL_KEY = [e + NULL_KEY for e in ENCODED]
_FAST_MAX = TABLE_SIZE - 32  # a record's length then still has a table entry
_ONE_BYTE_OFFSETS = 64
_FAST_RECORDS = 1 << 20  # offset deltas of up to three bytes
# A three-byte offset delta (8192 <= i < 2**20, zigzag 2i) is three one-byte pieces: seven
# bits each of 2i, lowest first, the last one followed by a null key's length.
_OFFSET_LOW = [bytes([(i << 1) | 0x80]) for i in range(64)]  # i & 63
_OFFSET_MID = [bytes([i | 0x80]) for i in range(128)]  # (i >> 6) & 127
_OFFSET_HIGH = [bytes([i]) for i in range(128)]  # i >> 13
_OFFSET_HIGH_NULL_KEY = [h + b"\x01" for h in _OFFSET_HIGH]


def _unkeyed(offset_bytes: int) -> tuple[list[bytes], list[int]]:
    """Length varints and whole sizes of unkeyed records by value size."""
    lengths = [ENCODED[4 + offset_bytes + len(ENCODED[n]) + n] for n in range(_FAST_MAX)]
    sizes = [len(lengths[n]) + 4 + offset_bytes + len(ENCODED[n]) + n for n in range(_FAST_MAX)]
    return lengths, sizes


_UNKEYED_LENGTH, _UNKEYED_SIZE = _unkeyed(1)
_UNKEYED_LENGTH_2, _UNKEYED_SIZE_2 = _unkeyed(2)
_UNKEYED_LENGTH_3, _UNKEYED_SIZE_3 = _unkeyed(3)


def _offset_delta(index: int) -> bytes:
    """The varint of an offset delta below 2**20."""
    if index < TABLE_SIZE:
        return ENCODED[index]
    return _OFFSET_LOW[index & 63] + _OFFSET_MID[(index >> 6) & 127] + _OFFSET_HIGH[index >> 13]


class BatchBuilder:
    """Accumulates records and produces one encoded batch.

    The producer calls :meth:`append` once per record, so that method does the per-record
    encoding and nothing else; the header and CRC are computed once in :meth:`build`.
    """

    __slots__ = (
        "_compression",
        "_count",
        "_first_ts",
        "_max_ts",
        "_parts",
        "_size",
        "base_sequence",
        "producer_epoch",
        "producer_id",
        "transactional",
    )

    def __init__(
        self,
        compression: Compression = Compression.NONE,
        producer_id: int = NO_PRODUCER_ID,
        producer_epoch: int = -1,
        base_sequence: int = NO_SEQUENCE,
        transactional: bool = False,
    ) -> None:
        self._compression = compression
        self._parts: list[bytes] = []
        self._count = 0
        self._size = HEADER_SIZE
        self._first_ts = -1
        self._max_ts = -1
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.transactional = transactional  # a transactional producer's batch (bit 4)

    def __len__(self) -> int:
        return self._count

    @property
    def size_bytes(self) -> int:
        """Encoded size so far (before compression)."""
        return self._size

    def estimated_size_with(self, key: bytes | None, value: bytes | None) -> int:
        """Size if a record with this key and value were appended (headers not counted)."""
        return self._size + 21 + (len(key) if key else 0) + (len(value) if value else 0)

    def append(
        self,
        timestamp_ms: int,
        key: bytes | None,
        value: bytes | None,
        headers: HeaderPairs | None = None,
    ) -> int:
        """Add a record; returns the bytes its encoding added to the batch."""
        index = self._count
        first = self._first_ts
        if index == 0:  # the first record (timestamps may be negative)
            first = self._first_ts = self._max_ts = timestamp_ms
        elif timestamp_ms > self._max_ts:
            self._max_ts = timestamp_ms
        delta = timestamp_ms - first
        if (
            not headers
            and type(value) is bytes
            and 0 <= delta < TABLE_SIZE
            and (n := len(value)) < _FAST_MAX
        ):
            if delta >= 64:
                # A batch open for 64 ms or more (a long linger, a slow producer, a producer
                # over many partitions): a two-byte timestamp delta, lengths summed here.
                size = self._append_late(index, delta, key, value, n)
            elif key is None:
                # Most records of a batch have two-byte offset deltas: that case first.
                if _ONE_BYTE_OFFSETS <= index < TABLE_SIZE:
                    self._parts += (
                        _UNKEYED_LENGTH_2[n],
                        _ATTR_AND_DELTA[delta],
                        _OFFSET_AND_NULL_KEY[index],
                        ENCODED[n],
                        value,
                        NO_HEADERS,
                    )
                    size = _UNKEYED_SIZE_2[n]
                elif index < _ONE_BYTE_OFFSETS:
                    self._parts += (
                        _UNKEYED_LENGTH[n],
                        _ATTR_AND_DELTA[delta],
                        _OFFSET_AND_NULL_KEY[index],
                        ENCODED[n],
                        value,
                        NO_HEADERS,
                    )
                    size = _UNKEYED_SIZE[n]
                elif index < _FAST_RECORDS:
                    self._parts += (
                        _UNKEYED_LENGTH_3[n],
                        _ATTR_AND_DELTA[delta],
                        _OFFSET_LOW[index & 63],
                        _OFFSET_MID[(index >> 6) & 127],
                        _OFFSET_HIGH_NULL_KEY[index >> 13],
                        ENCODED[n],
                        value,
                        NO_HEADERS,
                    )
                    size = _UNKEYED_SIZE_3[n]
                else:
                    size = self._append_encoded(encode_record(index, delta, key, value, headers))
            elif type(key) is bytes and (k := len(key)) < _FAST_MAX - n and index < _FAST_RECORDS:
                offset = _offset_delta(index)
                key_length = ENCODED[k]
                value_length = ENCODED[n]
                body = 3 + len(offset) + len(key_length) + k + len(value_length) + n
                length = ENCODED[body]
                self._parts += (
                    length,
                    _ATTR_AND_DELTA[delta],
                    offset,
                    key_length,
                    key,
                    value_length,
                    value,
                    NO_HEADERS,
                )
                size = len(length) + body
            else:
                size = self._append_encoded(encode_record(index, delta, key, value, headers))
        else:
            size = self._append_encoded(encode_record(index, delta, key, value, headers))
        self._count = index + 1
        self._size += size
        return size

    def _append_late(self, index: int, delta: int, key: bytes | None, value: bytes, n: int) -> int:
        """A record without headers, 64 to 8191 ms after the batch's first, with a value
        of ``n`` bytes under 8160: its pieces come from the tables, its length is summed."""
        if index >= _FAST_RECORDS:
            return self._append_encoded(encode_record(index, delta, key, value, None))
        attr_delta = b"\x00" + ENCODED[delta]
        offset = _offset_delta(index)
        value_length = ENCODED[n]
        if key is None:
            body = 2 + len(attr_delta) + len(offset) + len(value_length) + n
            length = ENCODED[body]
            self._parts += (length, attr_delta, offset, NULL_KEY, value_length, value, NO_HEADERS)
            return len(length) + body
        if type(key) is not bytes or (k := len(key)) >= _FAST_MAX - n:
            return self._append_encoded(encode_record(index, delta, key, value, None))
        key_length = ENCODED[k]
        body = 1 + len(attr_delta) + len(offset) + len(key_length) + k + len(value_length) + n
        length = ENCODED[body]
        parts = self._parts  # extended in place
        parts += (length, attr_delta, offset, key_length, key, value_length, value, NO_HEADERS)
        return len(length) + body

    def _append_encoded(self, encoded: bytes) -> int:
        self._parts.append(encoded)
        return len(encoded)

    def build(self) -> bytes:
        """Encode the batch with base_offset 0 and leader_epoch -1 (the leader sets both)."""
        count = self._count
        if count == 0:
            raise ValueError("cannot build an empty batch")
        payload = b"".join(self._parts)
        if self._compression is not Compression.NONE:
            payload = compress(self._compression, payload)
        return encode_batch_from_payload(
            payload,
            record_count=count,
            first_timestamp_ms=self._first_ts,
            max_timestamp_ms=self._max_ts,
            attributes=int(self._compression) | (ATTR_TRANSACTIONAL if self.transactional else 0),
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            base_sequence=self.base_sequence,
        )


def encode_batch_from_payload(
    payload: bytes,
    *,
    record_count: int,
    first_timestamp_ms: int,
    max_timestamp_ms: int,
    attributes: int = 0,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = -1,
    base_sequence: int = NO_SEQUENCE,
    base_offset: int = 0,
    leader_epoch: int = -1,
    last_offset_delta: int | None = None,
) -> bytes:
    """Frame already-encoded (and possibly compressed) records as a batch.

    ``last_offset_delta`` defaults to ``record_count - 1``; only an empty batch left by the
    log cleaner (no records, ``payload`` empty) spans offsets of its own.

    The CRC is computed over the header's covered part and then continued over the records,
    so the records are copied once, into the result."""
    header = bytearray(HEADER_SIZE)
    HEADER.pack_into(
        header,
        0,
        base_offset,
        HEADER_SIZE - LENGTH_PREFIX_SIZE + len(payload),
        leader_epoch,
        MAGIC,
        0,
        attributes,
        record_count - 1 if last_offset_delta is None else last_offset_delta,
        first_timestamp_ms,
        max_timestamp_ms,
        producer_id,
        producer_epoch,
        base_sequence,
        record_count,
    )
    crc = crc32c.crc32c(payload, crc32c.crc32c(memoryview(header)[CRC_START:]))
    _CRC.pack_into(header, CRC_OFFSET, crc)
    return b"".join((header, payload))


def build_batch(
    records: Sequence[tuple[int, bytes | None, bytes | None, HeaderPairs | None]],
    compression: Compression = Compression.NONE,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = -1,
    base_sequence: int = NO_SEQUENCE,
) -> bytes:
    """One batch from ``(timestamp_ms, key, value, headers)`` tuples."""
    builder = BatchBuilder(compression, producer_id, producer_epoch, base_sequence)
    for ts, key, value, headers in records:
        builder.append(ts, key, value, headers)
    return builder.build()
