"""Decoding a batch whose records all share one layout, in C, with one regular expression.

A producer usually sends records of one shape: the same key length (or no key), the same
value length, no headers, timestamps within 63 ms of the batch's first. Such records differ
only in their timestamp and offset delta bytes and their contents, so one compiled pattern
per (key length, value length, offset delta width) matches every record and ``findall``
returns the fields of all of them in a single C call, where a Python loop would pay for
each record.

Nothing is taken on trust: the records' sizes are fixed by the pattern, so the batch must be
exactly as long as ``count`` of them (checked before any matching: a batch of mixed sizes
is turned away at once); ``findall`` must then return exactly as many matches as records in
each span, which tiles it; and the offset deltas, read at their fixed stride, must equal
``0, 1, ..., count - 1`` encoded. When any of this fails, ``decode_uniform`` returns None
and the general decoder (wire.record_codec) decodes the batch and names what is wrong.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rillet.wire.errors import CorruptBatch
from rillet.wire.varint import DECODED, ENCODED, read_varint, zigzag_encode_bytes

MAX_RECORDS = 1 << 20  # offset deltas of up to three bytes
# Offset deltas are one byte below 64, two below 8192, three below 2**20: the records of
# each span have their own size and pattern.
_SPANS = ((0, 64, 1), (64, 8192, 2), (8192, MAX_RECORDS, 3))
_OFFSET_PATTERNS = (
    rb"[\x00-\x7f]",
    rb"[\x80-\xff][\x00-\x7f]",
    rb"[\x80-\xff][\x80-\xff][\x00-\x7f]",
)
# Each byte of the offset deltas of a span, in record order (zigzag: delta i is 2i).
_ONE_BYTE = bytes(e[0] for e in ENCODED[:64])
_TWO_BYTES = (bytes(e[0] for e in ENCODED[64:8192]), bytes(e[1] for e in ENCODED[64:8192]))
_THREE_BYTES_LOW = bytes(((i & 63) << 1) | 0x80 for i in range(64))  # repeats every 64
_THREE_BYTES_MID = bytes(((i >> 6) & 127) | 0x80 for i in range(8192))  # repeats every 8192

Columns = tuple[list[int], list[bytes | None], list[bytes | None]]


def _three_byte_offsets(count: int) -> tuple[bytes, bytes, bytes]:
    """The three bytes of the offset deltas 8192 .. 8192 + count - 1, each in order."""
    low = (_THREE_BYTES_LOW * (count // 64 + 1))[:count]
    mid = (_THREE_BYTES_MID * (count // 8192 + 1))[:count]
    high = b"".join(bytes([h]) * 8192 for h in range(1, count // 8192 + 2))[:count]
    return low, mid, high


def _expected_offsets(width: int, count: int) -> tuple[bytes, ...]:
    if width == 1:
        return (_ONE_BYTE[:count],)
    if width == 2:
        return (_TWO_BYTES[0][:count], _TWO_BYTES[1][:count])
    return _three_byte_offsets(count)


def _record_body(key_length: int, value_length: int, offset_width: int) -> int:
    """Bytes after the length varint of one record: plain arithmetic, so a batch of another
    shape is turned away before any pattern is compiled."""
    key_bytes = len(zigzag_encode_bytes(key_length)) + key_length if key_length >= 0 else 1
    # attributes, timestamp delta, offset delta, key, value and header count
    return 2 + offset_width + key_bytes + len(zigzag_encode_bytes(value_length)) + value_length + 1


@lru_cache(maxsize=64)
def _pattern(key_length: int, value_length: int, offset_width: int) -> re.Pattern[bytes]:
    """The record pattern, capturing the key (if any) and the value."""
    key_part = (
        re.escape(zigzag_encode_bytes(key_length)) + b"(.{%d})" % key_length
        if key_length >= 0
        else b"\x01"
    )
    body = _record_body(key_length, value_length, offset_width)
    return re.compile(
        re.escape(zigzag_encode_bytes(body))
        + rb"\x00[\x00-\x7f]"  # attributes, a one-byte timestamp delta
        + _OFFSET_PATTERNS[offset_width - 1]
        + key_part
        + re.escape(zigzag_encode_bytes(value_length))
        + b"(.{%d})" % value_length
        + rb"\x00",  # no headers
        re.DOTALL,
    )


def first_record_shape(buf: bytes) -> tuple[int, int] | None:
    """(key length or -1, value length) of the first record, when it looks like the common
    shape (a one-byte timestamp delta, offset delta 0, a value); None otherwise."""
    try:
        _, position = read_varint(buf, 0)
        if buf[position + 1] >= 0x80 or buf[position + 2] != 0:
            return None
        key_length, position = read_varint(buf, position + 3)
        if key_length > 0:
            position += key_length
        value_length, _ = read_varint(buf, position)
    except (CorruptBatch, IndexError):
        return None
    return key_length, value_length


def decode_uniform(buf: bytes, count: int, key_length: int, value_length: int) -> Columns | None:
    """(timestamp deltas, keys, values) of ``count`` records that all have the given key
    and value lengths (-1: null key) and no headers; None when they do not.

    The records of a span have a fixed size, so their timestamp and offset delta bytes sit
    at a fixed stride and are read with one extended slice each; ``findall`` checks every
    record's structure and returns the keys and values.
    """
    if not 0 < count <= MAX_RECORDS or value_length < 0:
        return None
    spans = []
    start = 0
    for first, stop, width in _SPANS:
        n = min(count, stop) - first
        if n <= 0:
            break
        body = _record_body(key_length, value_length, width)
        head = len(zigzag_encode_bytes(body))
        spans.append((start, n, head + body, head + 1, width))
        start += n * (head + body)
    end = len(buf)
    if start != end:
        return None
    deltas = b""
    found: list[bytes] | list[tuple[bytes, bytes]] = []
    for start, n, size, timestamp_at, width in spans:
        stop = start + n * size
        for k, expected in enumerate(_expected_offsets(width, n)):
            if buf[start + timestamp_at + 1 + k : stop : size] != expected:
                return None
        matches = _pattern(key_length, value_length, width).findall(buf, start, stop)
        if len(matches) != n:
            return None
        found += matches
        deltas += buf[start + timestamp_at : stop : size]
    timestamp_deltas = list(map(DECODED.__getitem__, deltas))
    if key_length >= 0:
        keys, values = zip(*found, strict=True)
        return timestamp_deltas, list(keys), list(values)
    return timestamp_deltas, [None] * count, found  # type: ignore[return-value]
