"""Record batch: the one format used on disk and on the wire (DESIGN.md §2).

Header (big-endian, 61 bytes), then the payload::

    base_offset int64 | batch_length int32 | leader_epoch int32 | magic int8 | crc uint32 |
    attributes int16 | last_offset_delta int32 | first_timestamp_ms int64 |
    max_timestamp_ms int64 | producer_id int64 | producer_epoch int16 | base_sequence int32 |
    record_count int32 | payload

``batch_length`` counts the bytes after its own field, so a batch occupies
``12 + batch_length`` bytes. The CRC-32C covers everything after the crc field, which lets the
leader assign ``base_offset`` and ``leader_epoch`` in place without recomputing it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import crc32c

from rillet.wire.compression import CODEC_MASK, Compression, compress, decompress
from rillet.wire.errors import CorruptBatch
from rillet.wire.record_codec import (
    BYTES_HEADS,
    HeaderPairs,
    array_head,
    decode_payload,
    encode_record,
)

MAGIC = 1
HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
LENGTH_PREFIX_SIZE = 12  # base_offset + batch_length
CRC_OFFSET = 17
CRC_START = 21  # first byte covered by the CRC (attributes)
MIN_BATCH_SIZE = HEADER_SIZE + 1  # a payload is at least a one-byte CBOR array head

_BASE_AND_LENGTH = struct.Struct(">qi")
_BASE_OFFSET = struct.Struct(">q")
_LEADER_EPOCH = struct.Struct(">i")
_LEADER_EPOCH_OFFSET = 12
_MAX_TS_OFFSET = 35
_ATTRIBUTES = struct.Struct(">h")
_TIMESTAMPS = struct.Struct(">qq")  # first_timestamp_ms, max_timestamp_ms
_FIRST_TS_OFFSET = 27
_CRC = struct.Struct(">I")

ATTR_TIMESTAMP_LOG_APPEND = 0x08
ATTR_CONTROL = 0x20

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
    headers: list[tuple[str, bytes]]


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

    Raises CorruptBatch when the batch is truncated, oversized, of an unknown magic,
    internally inconsistent, or fails its CRC.
    """
    if available < HEADER_SIZE:
        raise CorruptBatch(f"{available} bytes cannot hold a batch header")
    header = read_header(buf, position)
    size = header.size
    if header.batch_length < MIN_BATCH_SIZE - LENGTH_PREFIX_SIZE:
        raise CorruptBatch(f"batch_length {header.batch_length} is too small")
    if size > max_batch_bytes:
        raise CorruptBatch(f"batch of {size} bytes exceeds the limit of {max_batch_bytes}")
    if size > available:
        raise CorruptBatch(f"batch of {size} bytes is truncated at {available} bytes")
    if header.magic != MAGIC:
        raise CorruptBatch(f"unknown batch magic {header.magic}")
    if header.record_count < 1 or header.last_offset_delta != header.record_count - 1:
        raise CorruptBatch("record_count and last_offset_delta disagree")
    if header.max_timestamp_ms < header.first_timestamp_ms:
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
    raw = decode_payload(decompress(header.compression, stored), header.record_count)
    base_off = header.base_offset
    if header.attributes & ATTR_TIMESTAMP_LOG_APPEND:  # every record has the append time
        ts = header.max_timestamp_ms
        return [Record(base_off + i, ts, r[1], r[2], r[3] or []) for i, r in enumerate(raw)]
    base_ts = header.first_timestamp_ms
    return [Record(base_off + i, base_ts + r[0], r[1], r[2], r[3] or []) for i, r in enumerate(raw)]


# b"\x84" (array of 4) + delta as a small CBOR uint + b"\xf6" (null key)
_UNKEYED_HEADS = [b"\x84" + bytes([d]) + b"\xf6" for d in range(24)]


class BatchBuilder:
    """Accumulates records and produces one encoded batch.

    The producer calls :meth:`append` once per record, so that method does the per-record
    encoding and nothing else; the header and CRC are computed once in :meth:`build`.
    """

    __slots__ = (
        "_compression",
        "_first_ts",
        "_max_ts",
        "_parts",
        "_size",
        "base_sequence",
        "producer_epoch",
        "producer_id",
    )

    def __init__(
        self,
        compression: Compression = Compression.NONE,
        producer_id: int = NO_PRODUCER_ID,
        producer_epoch: int = -1,
        base_sequence: int = NO_SEQUENCE,
    ) -> None:
        self._compression = compression
        self._parts: list[bytes] = []
        self._size = HEADER_SIZE + 5
        self._first_ts = -1
        self._max_ts = -1
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence

    def __len__(self) -> int:
        return len(self._parts)

    @property
    def size_bytes(self) -> int:
        """Encoded size so far (before compression)."""
        return self._size

    def estimated_size_with(self, key: bytes | None, value: bytes | None) -> int:
        """Size if a record with this key and value were appended (headers not counted)."""
        return self._size + 16 + (len(key) if key else 0) + (len(value) if value else 0)

    def append(
        self,
        timestamp_ms: int,
        key: bytes | None,
        value: bytes | None,
        headers: HeaderPairs | None = None,
    ) -> int:
        """Add a record; returns the bytes its encoding added to the batch."""
        first = self._first_ts
        if not self._parts:  # the first record (timestamps may be negative)
            first = self._first_ts = self._max_ts = timestamp_ms
        elif timestamp_ms > self._max_ts:
            self._max_ts = timestamp_ms
        delta = timestamp_ms - first
        if key is None and not headers and value is not None and 0 <= delta < 24:
            n = len(value)
            if n < 256:
                # The common shape, encoded inline: [delta, null, value, null].
                encoded = _UNKEYED_HEADS[delta] + BYTES_HEADS[n] + value + b"\xf6"
            else:
                encoded = encode_record(delta, key, value, headers)
        else:
            encoded = encode_record(delta, key, value, headers)
        self._parts.append(encoded)
        size = len(encoded)
        self._size += size
        return size

    def build(self) -> bytes:
        """Encode the batch with base_offset 0 and leader_epoch -1 (the leader sets both)."""
        count = len(self._parts)
        if count == 0:
            raise ValueError("cannot build an empty batch")
        payload = array_head(count) + b"".join(self._parts)
        if self._compression is not Compression.NONE:
            payload = compress(self._compression, payload)
        return encode_batch_from_payload(
            payload,
            record_count=count,
            first_timestamp_ms=self._first_ts,
            max_timestamp_ms=self._max_ts,
            attributes=int(self._compression),
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
) -> bytes:
    """Frame an already-encoded (and possibly compressed) payload as a batch."""
    batch_length = HEADER_SIZE - LENGTH_PREFIX_SIZE + len(payload)
    out = bytearray(HEADER_SIZE + len(payload))
    HEADER.pack_into(
        out,
        0,
        base_offset,
        batch_length,
        leader_epoch,
        MAGIC,
        0,
        attributes,
        record_count - 1,
        first_timestamp_ms,
        max_timestamp_ms,
        producer_id,
        producer_epoch,
        base_sequence,
        record_count,
    )
    out[HEADER_SIZE:] = payload
    crc = crc32c.crc32c(memoryview(out)[CRC_START:])
    struct.pack_into(">I", out, CRC_OFFSET, crc)
    return bytes(out)


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
