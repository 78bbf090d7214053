"""A follower's fetch answer filtered and encoded in slices (replication/encoded_fetch_answer.py):
the same bytes as the plain answer, yields between entries, and no descriptor left open
when cancelled."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import trio

from rillet.broker.replica.replication.encoded_fetch_answer import (
    EncodedFetchResponse,
    encoded_answer,
)
from rillet.broker.runtime import loop_slices
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FileRegion, FrameDecoder
from rillet.wire.messages import FetchPartitionResponse, FetchResponse
from rillet.wire.protocol import decode_response, encode_response
from rillet.wire.schema import to_wire


def entry(partition: int, records: Any = b"", code: int = ErrorCode.NONE) -> FetchPartitionResponse:
    return FetchPartitionResponse(
        "t", partition, code, 10 + partition, 0, records, log_end_offset=12, leader_epoch=3
    )


def open_regions(tmp_path: Path, count: int) -> list[FileRegion]:
    path = tmp_path / "segment"
    path.write_bytes(b"r" * 4096)
    fd = os.open(path, os.O_RDONLY)
    try:
        return [FileRegion(os.dup(fd), 16 * i, 16) for i in range(count)]
    finally:
        os.close(fd)


def is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


async def test_an_encoded_answer_is_the_bytes_of_the_plain_answer(tmp_path: Path) -> None:
    regions = open_regions(tmp_path, 2)
    response = FetchResponse(
        [
            entry(0, b"batch-0"),
            entry(1),  # no news: dropped
            entry(2, regions[0]),
            entry(3, code=ErrorCode.NOT_LEADER_OR_FOLLOWER),
            entry(4),  # dropped
            entry(5, regions[1]),
        ]
    )
    answer = await encoded_answer(response, lambda r: r.partition not in (1, 4))
    kept = FetchResponse([r for r in response.partitions if r.partition not in (1, 4)])
    assert answer.partitions == kept.partitions
    assert encode_response(9, answer) == encode_response(9, kept)
    for region in regions:
        os.close(region.fd)


async def test_a_decoded_encoded_answer_is_the_kept_answer() -> None:
    response = FetchResponse([entry(p, b"x" * p) for p in range(1, 40)])
    answer = await encoded_answer(response, lambda r: r.partition % 3 != 0)
    decoder = FrameDecoder()
    decoder.feed(b"".join(bytes(p) for p in encode_response(4, answer)))  # type: ignore[arg-type]
    frame = decoder.next_frame()
    assert frame is not None
    got = decode_response(frame, FetchResponse)
    assert [(r.partition, bytes(r.records)) for r in got.partitions] == [
        (p, b"x" * p) for p in range(1, 40) if p % 3 != 0
    ]


async def test_the_filter_and_the_encoding_yield_between_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(loop_slices, "SLICE_S", 0.0)  # every entry uses up a slice
    order: list[str] = []

    async def other_task() -> None:
        for _ in range(20):
            order.append("other")
            await trio.lowlevel.checkpoint()

    def keeps(r: FetchPartitionResponse) -> bool:
        order.append(f"p{r.partition}")
        return True

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other_task)
        await encoded_answer(FetchResponse([entry(p, b"x") for p in range(10)]), keeps)
    first, last = order.index("p0"), order.index("p9")
    assert "other" in order[first:last]  # without slices the ten entries ran back to back


async def test_a_cancelled_answer_closes_every_region(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loop_slices, "SLICE_S", 0.0)
    regions = open_regions(tmp_path, 6)
    response = FetchResponse([entry(p, regions[p]) for p in range(6)])
    seen: list[int] = []

    def keeps(r: FetchPartitionResponse) -> bool:
        seen.append(r.partition)
        if len(seen) == 3:
            scope.cancel()  # the connection went away mid-answer
        return True

    with trio.CancelScope() as scope:
        await encoded_answer(response, keeps)
    assert seen == [0, 1, 2]
    assert not any(is_open(region.fd) for region in regions)


def test_an_answer_that_is_not_the_frames_first_blob_user_encodes_afresh() -> None:
    plain = FetchResponse([entry(0, b"a"), entry(1, b"b")])
    encoded = EncodedFetchResponse(plain.partitions, blobs=(b"a", b"b"))
    blobs: list[Any] = [b"before"]
    assert to_wire(encoded, blobs) == to_wire(plain, [b"before"])
    assert blobs == [b"before", b"a", b"b"]
