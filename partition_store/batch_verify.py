"""Checking the CRC of stored batches: finding bit rot in bytes the store trusted.

Recovery re-validates only what a crash may have torn; everything below the recovery point,
and every segment after a clean shutdown, is trusted. Disks still rot (a flipped bit in a
sealed segment, a bad sector read back as garbage), and a leader must never serve such a
batch. These functions check whole batches — structure, CRC-32C (via ``wire.batch``) and the
offset chain — without decoding records:

- :func:`verify_buffer` is the pure core: it walks a buffer that starts at a batch boundary;
- :func:`verify_file_range` reads a range of a ``.log`` in bounded chunks and feeds it.

A range that verifies is remembered per segment (see ``LogSegment.verified_bytes``), so the
hot path of serving already-checked data stays ``sendfile`` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from rillet.wire import disk_io
from rillet.wire.batch import LENGTH_PREFIX_SIZE, check_batch, peek_length
from rillet.wire.errors import CorruptBatch

# One pread of this size at a time; a batch larger than it is read on its own.
VERIFY_CHUNK_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class BatchDamage:
    """Where a stored batch failed its check: the segment file, the batch's byte position in
    it and the offset it should start at (the previous batch's next offset)."""

    segment_path: Path
    position: int
    offset: int
    reason: str

    def __str__(self) -> str:
        return f"{self.segment_path} position {self.position} (offset {self.offset}): {self.reason}"


class VerifyOutcome(NamedTuple):
    """What a walk established: batches in ``[start, end_position)`` are intact and end at
    ``next_offset``; ``damage_reason`` says why the batch at ``end_position`` is not (None
    when the walk stopped for want of bytes, or at the end of the range)."""

    end_position: int
    next_offset: int
    damage_reason: str | None


def verify_buffer(
    buf: bytes | bytearray | memoryview, start: int, expected_offset: int, final: bool
) -> VerifyOutcome:
    """Check the whole batches of ``buf`` (its first byte is position ``start`` of the file).

    ``final`` says ``buf`` reaches the end of the range: a batch cut short there is damage,
    otherwise it only needs more bytes (the outcome stops before it, with no reason).
    """
    position, offset, end = 0, expected_offset, len(buf)
    while position < end:
        available = end - position
        if available < LENGTH_PREFIX_SIZE or peek_length(buf, position)[1] > available:
            if final:
                return VerifyOutcome(start + position, offset, "batch cut short by the range")
            break
        try:
            header = check_batch(buf, position, available, max_batch_bytes=available)
        except CorruptBatch as exc:
            return VerifyOutcome(start + position, offset, str(exc))
        if header.base_offset != offset:
            reason = f"batch says base offset {header.base_offset}, the chain says {offset}"
            return VerifyOutcome(start + position, offset, reason)
        position += header.size
        offset = header.next_offset
    return VerifyOutcome(start + position, offset, None)


def verify_file_range(
    fd: int,
    start: int,
    end: int,
    expected_offset: int,
    max_bytes: int | None = None,
    chunk_bytes: int = VERIFY_CHUNK_BYTES,
) -> VerifyOutcome:
    """Check the batches of ``fd`` from ``start`` (a batch boundary) up to ``end``.

    Stops at the first damaged batch, at ``end``, or — with ``max_bytes`` — at the first
    batch boundary at least that far from ``start`` (a scrub's bounded step). Blocking reads:
    run it off the event loop for anything larger than a fetch's range.
    """
    position, offset = start, expected_offset
    stop = end if max_bytes is None else min(end, start + max_bytes)
    while position < stop:
        # At least a length prefix (a batch reaching past the chunk is then read whole).
        want = min(max(min(chunk_bytes, stop - position), LENGTH_PREFIX_SIZE), end - position)
        buf = disk_io.pread(fd, want, position)
        if len(buf) >= LENGTH_PREFIX_SIZE:
            size = peek_length(buf)[1]
            if len(buf) < size <= end - position:
                buf = disk_io.pread(fd, size, position)  # one batch larger than a chunk
        final = position + len(buf) >= end or len(buf) < want
        outcome = verify_buffer(buf, position, offset, final)
        if outcome.damage_reason is not None:
            return outcome
        if outcome.end_position == position:
            reason = f"batch at position {position} cannot be read whole"
            return VerifyOutcome(position, offset, reason)
        position, offset = outcome.end_position, outcome.next_offset
    return VerifyOutcome(position, offset, None)
