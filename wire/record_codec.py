"""The records inside a batch: Kafka's v2 record layout, encoded and decoded.

After the batch header come ``record_count`` records, each::

    length varint (bytes after this field) | attributes int8 (unused, 0) |
    timestamp_delta varlong | offset_delta varint | key_length varint (-1: null) | key |
    value_length varint (-1: null) | value | header_count varint |
    headers: key_length varint | utf-8 key | value_length varint (-1: null) | value

All varints are zigzag (wire.varint). Deltas are relative to the batch header's
``first_timestamp_ms`` and ``base_offset``; rillet's batches always have
``offset_delta == index`` (the header check guarantees ``last_offset_delta == count - 1``).

Both directions run once per record in Python, so the common shapes (one- and two-byte
varints, no headers) are handled inline with table lookups, and everything rarer goes
through the general helpers. A CRC-valid batch can still come from a buggy producer, so the
decoder checks every length against the record's own length and the payload's end and
raises CorruptBatch, never another exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from rillet.wire.errors import CorruptBatch
from rillet.wire.uniform_records import decode_uniform, first_record_shape
from rillet.wire.varint import (
    DECODED,
    ENCODED,
    NULL_LENGTH,
    TABLE_SIZE,
    encode_varint,
    read_varint,
    read_varlong,
    zigzag_encode_bytes,
)

HeaderPairs = Sequence[tuple[str, bytes | None]]
DecodedHeaders = list[tuple[str, bytes | None]]


class RecordColumns(NamedTuple):
    """The decoded records of one batch, field by field (index i is the record at
    ``base_offset + i``): consumers build their own row type from these in one pass, and
    Arrow takes them as whole columns."""

    timestamp_deltas_ms: list[int]
    keys: list[bytes | None]
    values: list[bytes | None]
    headers: list[DecodedHeaders | None] | None  # None when no record has headers


NO_HEADERS = b"\x00"
_NO_HEADERS_COUNT = 0
MIN_RECORD_BODY = 6  # attributes + four one-byte varints + header count


def _encode_bytes(b: bytes | None) -> bytes:
    if b is None:
        return NULL_LENGTH
    n = len(b)
    return (ENCODED[n] if n < TABLE_SIZE else zigzag_encode_bytes(n)) + b


def encode_headers(headers: HeaderPairs) -> bytes:
    """Header count and headers (keys utf-8 text, values bytes or None)."""
    parts = [encode_varint(len(headers))]
    for key, value in headers:
        if not isinstance(key, str):
            raise TypeError(f"header keys must be str, not {type(key).__name__}")
        parts.append(_encode_bytes(key.encode("utf-8")))
        if value is not None and not isinstance(value, bytes | bytearray | memoryview):
            raise TypeError(f"header values must be bytes or None, not {type(value).__name__}")
        parts.append(_encode_bytes(None if value is None else bytes(value)))
    return b"".join(parts)


def encode_record(
    offset_delta: int,
    timestamp_delta_ms: int,
    key: bytes | None,
    value: bytes | None,
    headers: HeaderPairs | None,
) -> bytes:
    """One record, its length prefix included (the general form of every shape)."""
    body = b"".join(
        (
            b"\x00",
            encode_varint(timestamp_delta_ms),
            encode_varint(offset_delta),
            _encode_bytes(key),
            _encode_bytes(value),
            encode_headers(headers) if headers else NO_HEADERS,
        )
    )
    return encode_varint(len(body)) + body


def _read_length(buf: bytes, position: int, what: str) -> tuple[int, int]:
    """A length varint; -1 (null) passes, other negatives are corrupt."""
    n, position = read_varint(buf, position)
    if n < -1:
        raise CorruptBatch(f"{what} length {n} is negative")
    return n, position


def _read_bytes(buf: bytes, position: int, end: int, what: str) -> tuple[bytes | None, int]:
    n, position = _read_length(buf, position, what)
    if n < 0:
        return None, position
    stop = position + n
    if stop > end:
        raise CorruptBatch(f"{what} of {n} bytes runs past the end of its record")
    return buf[position:stop], stop


def read_headers(buf: bytes, position: int, end: int) -> tuple[DecodedHeaders | None, int]:
    """Header count and headers at ``position`` of a record ending at ``end``.

    One-byte counts and lengths (the usual short keys and values) are read inline; an
    overrun shows as a position past ``end``, which the caller refuses."""
    b = buf[position]
    if b < 0x80 and not b & 1:
        count = b >> 1
        position += 1
    else:
        count, position = read_varint(buf, position)
        if count < 0 or count > end - position:  # each header takes at least two bytes
            raise CorruptBatch(f"header count {count} does not fit its record")
    if count == 0:
        return None, position
    headers: DecodedHeaders = []
    for _ in range(count):
        b = buf[position]
        if b < 0x80 and not b & 1:
            stop = position + 1 + (b >> 1)
            raw_key = buf[position + 1 : stop]
            position = stop
        else:
            found, position = _read_bytes(buf, position, end, "header key")
            if found is None:
                raise CorruptBatch("a header key is null")
            raw_key = found
        try:
            key = raw_key.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptBatch(f"a header key is not utf-8: {exc}") from exc
        b = buf[position]
        if b < 0x80 and not b & 1:
            stop = position + 1 + (b >> 1)
            value: bytes | None = buf[position + 1 : stop]
            position = stop
        elif b == 1:
            value = None
            position += 1
        else:
            value, position = _read_bytes(buf, position, end, "header value")
        headers.append((key, value))
    if position > end:
        raise CorruptBatch("headers run past the end of their record")
    return headers, position


# Below this many records the general loop is as quick as setting up the uniform decoder.
UNIFORM_MIN_RECORDS = 4


def decode_records(payload: bytes | bytearray | memoryview, count: int) -> RecordColumns:
    """The ``count`` records of a (decompressed) payload, as columns.

    Records that all share one layout are decoded in C (wire.uniform_records); any other
    batch, and any batch that does not pass that decoder's checks, by the general loop.
    Raises CorruptBatch on anything but exactly ``count`` well-formed records.
    """
    buf = payload if type(payload) is bytes else bytes(payload)
    if count >= UNIFORM_MIN_RECORDS:
        shape = first_record_shape(buf)
        if shape is not None:
            found = decode_uniform(buf, count, shape[0], shape[1])
            if found is not None:
                return RecordColumns(found[0], found[1], found[2], None)
    return _decode_general(buf, count)


def _decode_general(buf: bytes, count: int) -> RecordColumns:
    """The general decoder: one record at a time, every shape, every check.

    Each record must end exactly where its length says and the last one at the end of the
    payload; those two checks also catch impossible lengths (a record's fields take at
    least MIN_RECORD_BODY bytes) and fields running past the end, without a test per field.
    Fields go to four lists rather than a tuple per record: tuples are tracked by the garbage
    collector, and thousands of them per batch cost more in collections than the appends.
    """
    deltas: list[int] = []
    keys: list[bytes | None] = []
    values: list[bytes | None] = []
    all_headers: list[DecodedHeaders | None] = []
    any_headers = False
    dec = DECODED
    position = 0
    end = len(buf)
    if count < 0 or count > end:
        raise CorruptBatch(f"{count} records cannot fit in {end} bytes")
    try:
        for index in range(count):
            b = buf[position]  # the record's length
            if b < 0x80:
                record_end = position + 1 + dec[b]
                position += 1
            else:
                b1 = buf[position + 1]
                if b1 < 0x80:
                    record_end = position + 2 + dec[(b & 0x7F) | (b1 << 7)]
                    position += 2
                else:
                    length, position = read_varint(buf, position)
                    record_end = position + length
            # The attributes byte is unused by this record format.
            b = buf[position + 1]  # timestamp delta
            if b < 0x80:
                delta = dec[b]
                position += 2
            else:
                delta, position = read_varlong(buf, position + 1)
            b = buf[position]  # offset delta
            if b < 0x80:
                if dec[b] != index:
                    raise CorruptBatch(f"record {index} has offset delta {dec[b]}")
                position += 1
            else:
                b1 = buf[position + 1]
                if b1 < 0x80:
                    offset_delta = dec[(b & 0x7F) | (b1 << 7)]
                    position += 2
                else:
                    offset_delta, position = read_varint(buf, position)
                if offset_delta != index:
                    raise CorruptBatch(f"record {index} has offset delta {offset_delta}")
            b = buf[position]  # key length
            if b == 1:
                key = None
                position += 1
            elif b < 0x80 and not b & 1:
                position += 1
                key = buf[position : position + (b >> 1)]
                position += b >> 1
            else:
                key, position = _read_bytes(buf, position, record_end, "key")
            b = buf[position]  # value length
            if b < 0x80 and not b & 1:
                position += 1
                value = buf[position : position + (b >> 1)]
                position += b >> 1
            elif b == 1:
                value = None
                position += 1
            else:
                b1 = buf[position + 1]
                if b1 < 0x80 and not b & 1 and b >= 0x80:
                    n = ((b & 0x7F) | (b1 << 7)) >> 1
                    position += 2
                    value = buf[position : position + n]
                    position += n
                else:
                    value, position = _read_bytes(buf, position, record_end, "value")
            if buf[position] == 0:  # no headers
                position += 1
                headers = None
            else:
                headers, position = read_headers(buf, position, record_end)
                any_headers = True
            if position != record_end:
                raise CorruptBatch(f"record {index}'s fields do not add up to its length")
            deltas.append(delta)
            keys.append(key)
            values.append(value)
            all_headers.append(headers)
    except IndexError:
        raise CorruptBatch("records run past the end of the payload") from None
    if position != end:
        raise CorruptBatch(f"records end at byte {position}, the payload at {end}")
    return RecordColumns(deltas, keys, values, all_headers if any_headers else None)
