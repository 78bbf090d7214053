"""Zigzag variable-length integers, as Kafka's record format writes them.

A value is zigzag-mapped (0, -1, 1, -2, ... become 0, 1, 2, 3, ...) so small negative numbers
stay short, then written seven bits at a time, least significant group first, with the high
bit set on every byte but the last. Kafka calls the 32-bit form a varint (at most 5 bytes)
and the 64-bit form a varlong (at most 10 bytes).

Records are encoded and decoded one by one in Python, so the small cases are table lookups:
``ENCODED[v]`` holds the bytes of every ``0 <= v < TABLE_SIZE`` and ``DECODED[raw]`` the
signed value of every raw (un-zigzagged) varint of one or two bytes. Larger values take the
general functions below.
"""

from __future__ import annotations

from rillet.wire.errors import CorruptBatch

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
VARINT_MAX_BYTES = 5
VARLONG_MAX_BYTES = 10


def zigzag_encode_bytes(value: int) -> bytes:
    """The bytes of ``value`` (any int64) as a zigzag varint/varlong; ValueError beyond."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"{value} does not fit a varlong (int64)")
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


# Every non-negative value below TABLE_SIZE encodes in at most two bytes (raw < 2**14).
TABLE_SIZE = 1 << 13
ENCODED: list[bytes] = [zigzag_encode_bytes(v) for v in range(TABLE_SIZE)]
NULL_LENGTH = b"\x01"  # -1: a null key or value
# Signed value of every raw varint below 2**14: one-byte varints index it by their byte,
# two-byte ones by ``(b0 & 0x7F) | (b1 << 7)``.
DECODED: list[int] = [(raw >> 1) ^ -(raw & 1) for raw in range(1 << 14)]


def encode_varint(value: int) -> bytes:
    """Zigzag varint of a non-negative or small value (table first, then the general form)."""
    if 0 <= value < TABLE_SIZE:
        return ENCODED[value]
    return zigzag_encode_bytes(value)


def read_varint(buf: bytes, position: int, max_bytes: int = VARINT_MAX_BYTES) -> tuple[int, int]:
    """(value, position after it) of the zigzag varint at ``position``.

    Raises CorruptBatch when the varint runs past the buffer or is longer than ``max_bytes``
    (5 for a varint, 10 for a varlong); the value is then within int32 or int64.
    """
    raw = 0
    shift = 0
    end = len(buf)
    limit = position + max_bytes
    while True:
        if position >= end:
            raise CorruptBatch("a varint runs past the end of the records")
        if position >= limit:
            raise CorruptBatch(f"a varint is longer than {max_bytes} bytes")
        b = buf[position]
        position += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    value = (raw >> 1) ^ -(raw & 1)
    lo, hi = (INT32_MIN, INT32_MAX) if max_bytes == VARINT_MAX_BYTES else (INT64_MIN, INT64_MAX)
    if not lo <= value <= hi:
        raise CorruptBatch(f"varint value {value} is out of range")
    return value, position


def read_varlong(buf: bytes, position: int) -> tuple[int, int]:
    """(value, position after it) of the zigzag varlong (int64) at ``position``."""
    return read_varint(buf, position, VARLONG_MAX_BYTES)
