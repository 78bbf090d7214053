"""Compression codecs: round trips, rejection of garbage and unknown ids, the zip-bomb guard."""

from __future__ import annotations

import random
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rillet.wire.compression as compression_mod
from rillet.wire.batch import HEADER_SIZE, build_batch, check_batch, decode_records
from rillet.wire.compression import (
    CODEC_MASK,
    MAX_DECOMPRESSED_BYTES,
    Compression,
    compress,
    decompress,
)
from rillet.wire.errors import CorruptBatch, UnsupportedCompression, WireError
from rillet.wire.record_codec import array_head, encode_record


def test_codec_ids_are_stable_and_fit_the_mask() -> None:
    assert int(Compression.NONE) == 0 and int(Compression.ZLIB) == 1
    assert all(int(c) & ~CODEC_MASK == 0 for c in Compression)
    assert CODEC_MASK == 0x07
    assert MAX_DECOMPRESSED_BYTES == 256 * 1024 * 1024


@pytest.mark.parametrize(
    ("name", "codec"),
    [("none", Compression.NONE), ("zlib", Compression.ZLIB), (" ZLIB ", Compression.ZLIB)],
)
def test_parse_known_names(name: str, codec: Compression) -> None:
    assert Compression.parse(name) is codec


@pytest.mark.parametrize("name", ["", "gzip", "snappy", "lz4", "zstd", "1", "zlib9"])
def test_parse_unknown_names(name: str) -> None:
    with pytest.raises(UnsupportedCompression):
        Compression.parse(name)


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=3000), codec=st.sampled_from(list(Compression)))
def test_compress_round_trip(data: bytes, codec: Compression) -> None:
    packed = compress(codec, data)
    if codec is Compression.NONE:
        assert packed is data
    assert bytes(decompress(int(codec), packed)) == data
    assert bytes(decompress(int(codec), memoryview(packed))) == data


def test_compress_rejects_an_unknown_codec() -> None:
    with pytest.raises(UnsupportedCompression):
        compress(5, b"x")  # type: ignore[arg-type]


@pytest.mark.parametrize("codec_id", [2, 3, 4, 5, 6, 7, 8, 255, -1])
def test_decompress_rejects_unknown_codec_ids(codec_id: int) -> None:
    with pytest.raises(UnsupportedCompression):
        decompress(codec_id, zlib.compress(b"payload"))


def _bad_checksum() -> bytes:
    z = bytearray(zlib.compress(b"some payload bytes" * 10))
    z[-1] ^= 0x01
    return bytes(z)


@pytest.mark.parametrize(
    "garbage",
    [
        pytest.param(b"not zlib at all", id="text"),
        pytest.param(b"\x00" * 16, id="zeros"),
        pytest.param(b"\x78\x9c\xff\xff\xff\xff", id="bad-deflate-block"),
        pytest.param(b"\x78\x00rest", id="bad-header-check"),
        pytest.param(_bad_checksum(), id="bad-adler32"),
    ],
)
def test_decompress_rejects_garbage_zlib(garbage: bytes) -> None:
    with pytest.raises(CorruptBatch):
        decompress(Compression.ZLIB, garbage)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_decompress_of_random_bytes_raises_only_corrupt_batch(data: bytes) -> None:
    try:
        decompress(Compression.ZLIB, data)
    except CorruptBatch:
        pass
    except WireError as exc:  # pragma: no cover
        raise AssertionError(type(exc).__name__) from exc


def _truncated_adler() -> bytes:
    return zlib.compress(b"complete payload " * 50)[:-4]


def _cut_in_half() -> bytes:
    z = zlib.compress(random.Random(7).randbytes(4000))
    return z[: len(z) // 2]


@pytest.mark.parametrize(
    "damaged",
    [
        pytest.param(b"", id="empty-stream"),
        pytest.param(_truncated_adler(), id="missing-adler32-trailer"),
        pytest.param(_cut_in_half(), id="cut-in-half"),
        pytest.param(zlib.compress(b"payload") + b"junk", id="trailing-junk"),
    ],
)
def test_decompress_rejects_incomplete_or_padded_streams(damaged: bytes) -> None:
    with pytest.raises(CorruptBatch):
        decompress(Compression.ZLIB, damaged)


SMALL_LIMIT = 4096


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(compression_mod, "MAX_DECOMPRESSED_BYTES", SMALL_LIMIT)
    return SMALL_LIMIT


def test_zlib_bomb_beyond_the_limit_is_rejected(small_limit: int) -> None:
    bomb = zlib.compress(b"\x00" * (small_limit * 1000), 9)
    assert len(bomb) < small_limit
    with pytest.raises(CorruptBatch, match="size limit"):
        decompress(Compression.ZLIB, bomb)


@pytest.mark.parametrize("extra", [1, 2, 100, 258, 259, 10_000])
def test_one_byte_over_the_limit_is_rejected(small_limit: int, extra: int) -> None:
    with pytest.raises(CorruptBatch):
        decompress(Compression.ZLIB, zlib.compress(b"\x00" * (small_limit + extra)))


def test_exactly_the_limit_is_accepted(small_limit: int) -> None:
    data = b"\x00" * small_limit
    assert bytes(decompress(Compression.ZLIB, zlib.compress(data))) == data


@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(SMALL_LIMIT - 300, SMALL_LIMIT + 300),
    kind=st.sampled_from(["zeros", "random", "ab"]),
    level=st.sampled_from([0, 1, 6, 9]),
    seed=st.integers(0, 2**32),
)
def test_limit_is_exact_for_any_data(size: int, kind: str, level: int, seed: int) -> None:
    rng = random.Random(seed)
    if kind == "zeros":
        data = bytes(size)
    elif kind == "random":
        data = rng.randbytes(size)
    else:
        data = bytes(rng.choice(b"ab") for _ in range(size))
    packed = zlib.compress(data, level)
    saved = compression_mod.MAX_DECOMPRESSED_BYTES
    compression_mod.MAX_DECOMPRESSED_BYTES = SMALL_LIMIT
    try:
        if size <= SMALL_LIMIT:
            assert bytes(decompress(Compression.ZLIB, packed)) == data
        else:
            with pytest.raises(CorruptBatch):
                decompress(Compression.ZLIB, packed)
    finally:
        compression_mod.MAX_DECOMPRESSED_BYTES = saved


def test_bomb_inside_a_crc_valid_batch_is_rejected_by_decode_records(small_limit: int) -> None:
    n = small_limit // 2
    records = [(1000 + i, None, b"\x00" * 100, None) for i in range(n // 100 + 50)]
    payload = array_head(len(records)) + b"".join(
        encode_record(ts - 1000, k, v, h) for ts, k, v, h in records
    )
    assert len(payload) > small_limit
    batch = build_batch(records, Compression.ZLIB)
    assert len(batch) - HEADER_SIZE < small_limit  # the stored payload is small
    check_batch(batch, 0, len(batch), 1 << 20)  # structurally and CRC valid
    with pytest.raises(CorruptBatch):
        decode_records(batch)
