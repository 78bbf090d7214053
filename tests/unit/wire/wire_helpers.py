"""Shared strategies and helpers for the wire tests (imported by basename, like client_fakes)."""

from __future__ import annotations

import dataclasses
import enum
import struct
import types
import typing
from collections.abc import Sequence
from typing import Annotated, Any, Union, get_args, get_origin

import cbor2
import crc32c
from hypothesis import strategies as st

from rillet.wire.batch import CRC_OFFSET, CRC_START, HEADER
from rillet.wire.frame import FileRegion, Frame, FrameDecoder

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
BOUNDARY_SIZES = [0, 1, 63, 64, 255, 256, 8175, 8176, 8191, 8192, 65536]

# Byte strings around varint length boundaries (one byte up to 63, two up to 8191; the
# encoder's tables end at 8192), plus arbitrary short ones.
sized_bytes = st.builds(
    lambda n, fill: bytes([fill]) * n,
    st.sampled_from(BOUNDARY_SIZES),
    st.integers(0, 255),
)
maybe_bytes = st.one_of(st.none(), st.binary(max_size=40), sized_bytes)
header_keys = st.one_of(
    st.text(max_size=12),  # includes non-ASCII code points
    st.sampled_from(["", "k", "ключ", "键", "🔑" * 6, "a" * 23, "a" * 24, "é" * 12]),
)
header_values = st.one_of(st.none(), st.binary(max_size=30))  # Kafka allows null values
header_lists = st.lists(st.tuples(header_keys, header_values), max_size=4)
maybe_headers = st.one_of(st.none(), st.just([]), header_lists)

Rec = tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]] | None]


def records(
    min_ts: int = 0, max_ts: int = 2**41, min_size: int = 1, max_size: int = 12
) -> st.SearchStrategy[list[Rec]]:
    """Lists of (timestamp_ms, key, value, headers) with non-negative timestamps."""
    small = st.one_of(st.none(), st.binary(max_size=40))
    # Keep most records small so batches stay cheap; a few hit the size boundaries.
    body = st.one_of(small, small, small, sized_bytes)
    return st.lists(
        st.tuples(st.integers(min_ts, max_ts), body, body, maybe_headers),
        min_size=min_size,
        max_size=max_size,
    )


def expected_headers(
    h: Sequence[tuple[str, bytes | None]] | None,
) -> list[tuple[str, bytes | None]]:
    return [(k, v) for k, v in (h or [])]


def recrc(buf: bytearray, position: int = 0) -> None:
    """Recompute the CRC of the batch at ``position`` after a header edit."""
    (length,) = struct.unpack_from(">i", buf, position + 8)
    end = position + 12 + length
    struct.pack_into(
        ">I", buf, position + CRC_OFFSET, crc32c.crc32c(buf[position + CRC_START : end])
    )


FIELD_NAMES = [
    "base_offset",
    "batch_length",
    "leader_epoch",
    "magic",
    "crc",
    "attributes",
    "last_offset_delta",
    "first_timestamp_ms",
    "max_timestamp_ms",
    "producer_id",
    "producer_epoch",
    "base_sequence",
    "record_count",
]


def set_field(
    buf: bytearray, name: str, value: int, position: int = 0, fix_crc: bool = True
) -> None:
    """Rewrite one header field in place (and, by default, the CRC so only that field is off)."""
    fields = list(HEADER.unpack_from(buf, position))
    fields[FIELD_NAMES.index(name)] = value
    HEADER.pack_into(buf, position, *fields)
    if fix_crc:
        recrc(buf, position)


def join_parts(parts: Sequence[Any]) -> bytes:
    """Bytes of encoded frame parts; FileRegion parts are not allowed here."""
    assert not any(isinstance(p, FileRegion) for p in parts)
    return b"".join(bytes(p) for p in parts)


def raw_frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def header_frame(header: Any, tail: bytes = b"") -> bytes:
    """A frame whose body is ``cbor2.dumps(header) + tail``, bypassing encode_frame's checks."""
    return raw_frame(cbor2.dumps(header) + tail)


def one_frame(data: bytes, max_frame_bytes: int = 1 << 24) -> Frame:
    d = FrameDecoder(max_frame_bytes)
    d.feed(data)
    frame = d.next_frame()
    assert frame is not None
    assert d.next_frame() is None and d.buffered_bytes == 0
    return frame


def feed_in_chunks(decoder: FrameDecoder, data: bytes, sizes: Sequence[int]) -> list[Frame]:
    """Feed ``data`` in chunks of the given sizes (cycled) and collect complete frames."""
    frames: list[Frame] = []
    pos = k = 0
    while pos < len(data):
        step = sizes[k % len(sizes)]
        decoder.feed(data[pos : pos + step])
        pos += step
        k += 1
        while (f := decoder.next_frame()) is not None:
            frames.append(f)
    return frames


# -- strategies built from message dataclass annotations -----------------------------------------

_strategy_cache: dict[Any, st.SearchStrategy[Any]] = {}


def strategy_for(tp: Any) -> st.SearchStrategy[Any]:
    """A strategy producing valid values of a schema type (messages and their fields)."""
    cached = _strategy_cache.get(tp)
    if cached is not None:
        return cached
    strat = _build_strategy(tp)
    _strategy_cache[tp] = strat
    return strat


def _build_strategy(tp: Any) -> st.SearchStrategy[Any]:
    origin = get_origin(tp)
    if origin is Annotated:  # Blob
        return st.binary(max_size=64)
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        kwargs = {f.name: strategy_for(hints[f.name]) for f in dataclasses.fields(tp)}
        return st.builds(tp, **kwargs)
    if origin in (Union, types.UnionType):
        (inner,) = [a for a in get_args(tp) if a is not type(None)]
        return st.one_of(st.none(), strategy_for(inner))
    if origin is list:
        return st.lists(strategy_for(get_args(tp)[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=8), strategy_for(get_args(tp)[1]), max_size=3)
    if tp is int:
        return st.one_of(INT64, st.sampled_from([-1, 0, 1, 23, 24, 2**31 - 1, 2**63 - 1]))
    if tp is str:
        return st.text(max_size=12)
    if tp is bool:
        return st.booleans()
    if tp is bytes:
        return st.binary(max_size=32)
    if isinstance(tp, type) and issubclass(tp, enum.IntEnum):
        return st.sampled_from(list(tp))
    raise TypeError(f"no strategy for {tp!r}")


# Arbitrary CBOR-encodable values, for structure-aware fuzzing of headers and bodies.
cbor_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.binary(max_size=8),
)
cbor_values = st.recursive(
    cbor_leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers(-5, 5)), inner, max_size=4),
    ),
    max_leaves=12,
)
