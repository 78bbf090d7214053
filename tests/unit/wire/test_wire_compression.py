"""Compression codecs (Kafka's ids and stream formats): round trips, rejection of garbage and
unknown ids, the zip-bomb guard for every codec."""

from __future__ import annotations

import gzip
import random
import struct
import zlib

import cramjam
import lz4.frame
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.wire.batch import HEADER_SIZE, build_batch, check_batch, decode_records
from rillet.wire.compression import (
    CODEC_MASK,
    MAX_DECOMPRESSED_BYTES,
    XERIAL_HEADER,
    Compression,
    compress,
    decompress,
)
from rillet.wire.errors import CorruptBatch, UnsupportedCompression, WireError
from rillet.wire.record_codec import encode_record

CODECS = list(Compression)
PACKED = [c for c in Compression if c is not Compression.NONE]


def test_codec_ids_are_kafkas_and_fit_the_mask() -> None:
    assert [(c.name.lower(), int(c)) for c in Compression] == [
        ("none", 0),
        ("gzip", 1),
        ("snappy", 2),
        ("lz4", 3),
        ("zstd", 4),
    ]
    assert all(int(c) & ~CODEC_MASK == 0 for c in Compression)
    assert CODEC_MASK == 0x07
    assert MAX_DECOMPRESSED_BYTES == 256 * 1024 * 1024


@pytest.mark.parametrize(
    ("name", "codec"),
    [
        ("none", Compression.NONE),
        ("gzip", Compression.GZIP),
        (" GZIP ", Compression.GZIP),
        ("snappy", Compression.SNAPPY),
        ("lz4", Compression.LZ4),
        ("Zstd", Compression.ZSTD),
    ],
)
def test_parse_known_names(name: str, codec: Compression) -> None:
    assert Compression.parse(name) is codec


@pytest.mark.parametrize("name", ["", "zlib", "1", "gzip9", "brotli", "lz4hc"])
def test_parse_unknown_names(name: str) -> None:
    with pytest.raises(UnsupportedCompression, match="one of none, gzip, snappy, lz4, zstd"):
        Compression.parse(name)


def test_the_retired_zlib_name_points_to_gzip() -> None:
    with pytest.raises(UnsupportedCompression, match="use 'gzip'"):
        Compression.parse("zlib")


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=3000), codec=st.sampled_from(CODECS))
def test_compress_round_trip(data: bytes, codec: Compression) -> None:
    packed = compress(codec, data)
    if codec is Compression.NONE:
        assert packed is data
    assert bytes(decompress(int(codec), packed)) == data
    assert bytes(decompress(int(codec), memoryview(packed))) == data


@pytest.mark.parametrize("codec", PACKED)
@pytest.mark.parametrize("size", [0, 1, 32 * 1024 - 1, 32 * 1024, 32 * 1024 + 1, 200_000])
def test_round_trip_across_block_sizes(codec: Compression, size: int) -> None:
    data = random.Random(size).randbytes(size // 2) + bytes(size - size // 2)
    assert bytes(decompress(int(codec), compress(codec, data))) == data


def test_streams_are_the_formats_kafka_clients_write() -> None:
    data = b"kafka " * 20_000
    assert gzip.decompress(compress(Compression.GZIP, data)) == data
    assert lz4.frame.decompress(compress(Compression.LZ4, data)) == data
    assert zstandard.ZstdDecompressor().decompress(compress(Compression.ZSTD, data)) == data
    xerial = compress(Compression.SNAPPY, data)
    assert xerial.startswith(XERIAL_HEADER) and len(XERIAL_HEADER) == 16
    # xerial framing: blocks of at most 32 KiB input, each a big-endian length + raw snappy.
    position, out = 16, b""
    while position < len(xerial):
        (n,) = struct.unpack_from(">i", xerial, position)
        block = bytes(cramjam.snappy.decompress_raw(xerial[position + 4 : position + 4 + n]))
        assert len(block) <= 32 * 1024
        out += block
        position += 4 + n
    assert out == data


def test_raw_snappy_and_multi_member_gzip_are_read() -> None:
    data = b"raw snappy from librdkafka-style clients " * 100
    assert bytes(decompress(2, bytes(cramjam.snappy.compress_raw(data)))) == data
    two = gzip.compress(data[:100]) + gzip.compress(data[100:])
    assert bytes(decompress(1, two)) == data


def test_compress_rejects_an_unknown_codec() -> None:
    with pytest.raises(UnsupportedCompression):
        compress(5, b"x")  # type: ignore[arg-type]


@pytest.mark.parametrize("codec_id", [5, 6, 7, 8, 255, -1])
def test_decompress_rejects_unknown_codec_ids(codec_id: int) -> None:
    with pytest.raises(UnsupportedCompression):
        decompress(codec_id, zlib.compress(b"payload"))


def _flip_last(data: bytes) -> bytes:
    z = bytearray(data)
    z[-1] ^= 0x01
    return bytes(z)


SAMPLE = b"some records " * 300


@pytest.mark.parametrize(
    ("codec", "garbage"),
    [
        pytest.param(1, b"not gzip at all", id="gzip-text"),
        pytest.param(1, b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"\xff\xff", id="gzip-bad-block"),
        pytest.param(1, _flip_last(gzip.compress(SAMPLE)), id="gzip-bad-length-trailer"),
        pytest.param(1, zlib.compress(SAMPLE), id="gzip-zlib-stream"),
        pytest.param(2, b"\xff\xff\xff\xff\xff\xff", id="snappy-bad-length"),
        pytest.param(2, XERIAL_HEADER[:12], id="xerial-short-header"),
        pytest.param(2, XERIAL_HEADER + b"\x00\x00", id="xerial-short-length"),
        pytest.param(2, XERIAL_HEADER + b"\x00\x00\x10\x00ab", id="xerial-block-too-long"),
        pytest.param(2, XERIAL_HEADER + b"\xff\xff\xff\xff", id="xerial-negative-block"),
        pytest.param(3, b"\x04\x22\x4d\x18garbage", id="lz4-bad-descriptor"),
        pytest.param(3, b"not lz4", id="lz4-text"),
        pytest.param(4, b"not zstd", id="zstd-text"),
        pytest.param(4, _flip_last(zstandard.ZstdCompressor().compress(SAMPLE)), id="zstd-bad"),
    ],
)
def test_decompress_rejects_garbage(codec: int, garbage: bytes) -> None:
    with pytest.raises(CorruptBatch):
        decompress(codec, garbage)


@pytest.mark.parametrize("codec", PACKED)
@pytest.mark.parametrize("damage", ["truncated", "cut-in-half", "trailing-junk", "empty"])
def test_decompress_rejects_incomplete_or_padded_streams(codec: Compression, damage: str) -> None:
    packed = compress(codec, random.Random(7).randbytes(4000) + SAMPLE)
    damaged = {
        "truncated": packed[:-4],
        "cut-in-half": packed[: len(packed) // 2],
        "trailing-junk": packed + b"junk",
        "empty": b"",
    }[damage]
    if codec is Compression.SNAPPY and damage == "trailing-junk":
        damaged = packed + b"\x00\x00\x00\x04junk"  # a block that is not snappy
    with pytest.raises(CorruptBatch):
        decompress(int(codec), damaged)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=200), codec=st.sampled_from(PACKED))
def test_decompress_of_random_bytes_raises_only_corrupt_batch(
    data: bytes, codec: Compression
) -> None:
    try:
        decompress(int(codec), data)
    except CorruptBatch:
        pass
    except WireError as exc:  # pragma: no cover
        raise AssertionError(type(exc).__name__) from exc


@settings(max_examples=300, deadline=None)
@given(st.data(), st.sampled_from(PACKED))
def test_decompress_of_mutated_streams_raises_only_corrupt_batch(
    data: st.DataObject, codec: Compression
) -> None:
    packed = bytearray(compress(codec, SAMPLE + random.Random(3).randbytes(500)))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(packed) - 1))
        packed[i] = data.draw(st.integers(0, 255))
    try:
        decompress(int(codec), bytes(packed), max_bytes=1 << 20)
    except CorruptBatch:
        pass


SMALL_LIMIT = 4096


def _bomb(codec: Compression, size: int) -> bytes:
    if codec is Compression.SNAPPY:  # one raw block claims its whole size up front
        return bytes(cramjam.snappy.compress_raw(b"\x00" * size))
    return compress(codec, b"\x00" * size)


@pytest.mark.parametrize("codec", PACKED)
def test_bomb_beyond_the_limit_is_rejected(codec: Compression) -> None:
    for bomb in (_bomb(codec, SMALL_LIMIT * 100), compress(codec, b"\x00" * SMALL_LIMIT * 100)):
        with pytest.raises(CorruptBatch, match="limit"):
            decompress(int(codec), bomb, SMALL_LIMIT)


def test_zstd_frame_without_a_content_size_is_bounded_too() -> None:
    c = zstandard.ZstdCompressor().compressobj()
    streamed = c.compress(b"\x00" * SMALL_LIMIT * 100) + c.flush()
    with pytest.raises(CorruptBatch):
        decompress(4, streamed, SMALL_LIMIT)
    assert len(decompress(4, streamed, SMALL_LIMIT * 100)) == SMALL_LIMIT * 100


@pytest.mark.parametrize("codec", PACKED)
@pytest.mark.parametrize("extra", [1, 2, 100, 10_000])
def test_just_over_the_limit_is_rejected(codec: Compression, extra: int) -> None:
    with pytest.raises(CorruptBatch):
        decompress(int(codec), _bomb(codec, SMALL_LIMIT + extra), SMALL_LIMIT)


@pytest.mark.parametrize("codec", PACKED)
def test_exactly_the_limit_is_accepted(codec: Compression) -> None:
    data = b"\x00" * SMALL_LIMIT
    assert bytes(decompress(int(codec), compress(codec, data), SMALL_LIMIT)) == data


@settings(max_examples=100, deadline=None)
@given(
    size=st.integers(SMALL_LIMIT - 300, SMALL_LIMIT + 300),
    kind=st.sampled_from(["zeros", "random", "ab"]),
    codec=st.sampled_from(PACKED),
    seed=st.integers(0, 2**32),
)
def test_limit_is_exact_for_any_data(size: int, kind: str, codec: Compression, seed: int) -> None:
    rng = random.Random(seed)
    if kind == "zeros":
        data = bytes(size)
    elif kind == "random":
        data = rng.randbytes(size)
    else:
        data = bytes(rng.choice(b"ab") for _ in range(size))
    packed = compress(codec, data)
    if size <= SMALL_LIMIT:
        assert bytes(decompress(int(codec), packed, SMALL_LIMIT)) == data
    else:
        with pytest.raises(CorruptBatch):
            decompress(int(codec), packed, SMALL_LIMIT)


@pytest.mark.parametrize("codec", PACKED)
def test_bomb_inside_a_crc_valid_batch_is_rejected_by_decode_records(
    codec: Compression, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rillet.wire.compression as compression_mod

    monkeypatch.setattr(compression_mod.decompress, "__defaults__", (SMALL_LIMIT,))
    records = [(1000 + i, None, b"\x00" * 100, None) for i in range(SMALL_LIMIT // 100 + 50)]
    payload = b"".join(
        encode_record(i, ts - 1000, k, v, h) for i, (ts, k, v, h) in enumerate(records)
    )
    assert len(payload) > SMALL_LIMIT
    batch = build_batch(records, codec)
    assert len(batch) - HEADER_SIZE < SMALL_LIMIT  # the stored records are small
    check_batch(batch, 0, len(batch), 1 << 20)  # structurally and CRC valid
    with pytest.raises(CorruptBatch):
        decode_records(batch)
