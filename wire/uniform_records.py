"""Decoding a batch whose records all share one layout, in C, with one regular expression.

A producer usually sends records of one shape: the same key length (or no key), the same
value length, no headers, timestamps within 63 ms of the batch's first. Such records differ
only in their timestamp and offset delta bytes and their contents, so one compiled pattern
per (key length, value length) matches every record of the batch and ``findall`` returns
the fields of all of them in a single C call, where a Python loop would pay for each record.

Nothing is taken on trust: the records' sizes are fixed by the pattern, so the batch must be
exactly as long as ``count`` of them (checked before any matching: a batch of mixed sizes
is turned away at once); ``findall`` must then return exactly ``count`` matches in that span,
which tiles it; and the offset deltas, joined, must equal ``0, 1, ..., count - 1`` encoded.
When any of this fails, ``decode_uniform`` returns None and the general decoder
(wire.record_codec) decodes the batch and names what is wrong.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rillet.wire.errors import CorruptBatch
from rillet.wire.varint import DECODED, ENCODED, TABLE_SIZE, read_varint, zigzag_encode_bytes

# Offsets 0..63 are one byte, 64..8191 two: the pattern differs only in that field.
_ONE_BYTE_OFFSETS = 64
MAX_RECORDS = TABLE_SIZE
_SHORT_OFFSETS = b"".join(ENCODED[:_ONE_BYTE_OFFSETS])
# The first and the second byte of every two-byte offset delta, in order.
_LONG_OFFSETS_FIRST = bytes(e[0] for e in ENCODED[_ONE_BYTE_OFFSETS:])
_LONG_OFFSETS_SECOND = bytes(e[1] for e in ENCODED[_ONE_BYTE_OFFSETS:])
_SHORT_OFFSET = rb"[\x00-\x7f]"
_LONG_OFFSET = rb"[\x80-\xff][\x00-\x7f]"

Columns = tuple[list[int], list[bytes | None], list[bytes | None]]


def _record_bodies(key_length: int, value_length: int) -> tuple[int, int]:
    """Bytes after the length varint of one record with a one- and a two-byte offset delta:
    plain arithmetic, so a batch of another shape is turned away before any pattern is
    compiled."""
    key_bytes = len(zigzag_encode_bytes(key_length)) + key_length if key_length >= 0 else 1
    # attributes, timestamp delta, key, value and header count: all but the offset delta
    fixed = 2 + key_bytes + len(zigzag_encode_bytes(value_length)) + value_length + 1
    return fixed + 1, fixed + 2


class _Layout:
    """One (key length, value length): for one- and two-byte offset deltas, the compiled
    record pattern, capturing the key (if any) and the value."""

    __slots__ = ("keyed", "patterns")

    def __init__(self, key_length: int, value_length: int) -> None:
        self.keyed = key_length >= 0
        key_part = (
            re.escape(zigzag_encode_bytes(key_length)) + b"(.{%d})" % key_length
            if self.keyed
            else b"\x01"
        )
        value_part = re.escape(zigzag_encode_bytes(value_length)) + b"(.{%d})" % value_length
        self.patterns = [
            re.compile(
                re.escape(zigzag_encode_bytes(body))
                + b"\\x00[\\x00-\\x7f]"
                + offset_pattern
                + key_part
                + value_part
                + b"\\x00",
                re.DOTALL,
            )
            for body, offset_pattern in zip(
                _record_bodies(key_length, value_length),
                (_SHORT_OFFSET, _LONG_OFFSET),
                strict=True,
            )
        ]


@lru_cache(maxsize=64)
def _layout(key_length: int, value_length: int) -> _Layout:
    return _Layout(key_length, value_length)


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

    The records have a fixed size, so their timestamp and offset delta bytes sit at a fixed
    stride and are read with one extended slice each; ``findall`` checks every record's
    structure and returns the keys and values.
    """
    if not 0 < count <= MAX_RECORDS or value_length < 0:
        return None
    short_body, long_body = _record_bodies(key_length, value_length)
    ts_short = len(zigzag_encode_bytes(short_body)) + 1  # after the length and attributes
    ts_long = len(zigzag_encode_bytes(long_body)) + 1
    short_size = ts_short - 1 + short_body
    long_size = ts_long - 1 + long_body
    short = min(count, _ONE_BYTE_OFFSETS)
    long = count - short
    split = short * short_size
    end = len(buf)
    if split + long * long_size != end:
        return None
    if buf[ts_short + 1 : split : short_size] != _SHORT_OFFSETS[:short]:
        return None
    deltas = buf[ts_short:split:short_size]
    layout = _layout(key_length, value_length)
    found = layout.patterns[0].findall(buf, 0, split)
    if len(found) != short:
        return None
    if long:
        first_byte = split + ts_long + 1
        if (
            buf[first_byte:end:long_size] != _LONG_OFFSETS_FIRST[:long]
            or buf[first_byte + 1 : end : long_size] != _LONG_OFFSETS_SECOND[:long]
        ):
            return None
        rest = layout.patterns[1].findall(buf, split, end)
        if len(rest) != long:
            return None
        found += rest
        deltas += buf[split + ts_long : end : long_size]
    timestamp_deltas = list(map(DECODED.__getitem__, deltas))
    if layout.keyed:
        keys, values = zip(*found, strict=True)
        return timestamp_deltas, list(keys), list(values)
    return timestamp_deltas, [None] * count, found
