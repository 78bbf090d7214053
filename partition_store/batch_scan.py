"""Walking the batches of a ``.log`` file by their headers, never their records.

Two walks, for two levels of trust:

- :func:`iter_headers` — over bytes the store wrote and trusts (reads, index lookups, the tail
  of a cleanly closed segment). It parses only the fixed 61-byte headers, reading the file in
  chunks so a run of small batches costs a few ``pread`` calls rather than one each.
- :func:`iter_valid_batches` — over bytes a crash may have torn (recovery). It checks every
  batch in full (structure and CRC-32C, via ``wire.batch.valid_prefix``), reading the file in
  bounded chunks so a 1 GiB segment is never held in memory, and stops at the first batch
  that is not intact.
"""

from __future__ import annotations

from collections.abc import Iterator

from rillet.partition_store.errors import CorruptLog
from rillet.wire import disk_io
from rillet.wire.batch import (
    EMPTY_BATCH_SIZE,
    HEADER_SIZE,
    LENGTH_PREFIX_SIZE,
    BatchHeader,
    peek_length,
    read_header,
    valid_prefix,
)

# A read of headers near an index entry: one index interval plus a header covers it.
SCAN_CHUNK_BYTES = 64 * 1024
# Recovery reads this much at a time (plus whole batches larger than it).
RECOVERY_CHUNK_BYTES = 4 * 1024 * 1024


def iter_headers(
    fd: int, start: int, end: int, chunk_bytes: int = SCAN_CHUNK_BYTES
) -> Iterator[tuple[int, BatchHeader]]:
    """``(position, header)`` of each batch from ``start`` (a batch boundary) up to ``end``.

    Raises CorruptLog if a header cannot be read or does not fit before ``end``: the caller
    trusted bytes that are not a sequence of batches.
    """
    chunk_bytes = max(chunk_bytes, HEADER_SIZE)
    buf = b""
    buf_start = start
    want = chunk_bytes
    position = start
    while position < end:
        rel = position - buf_start
        if len(buf) - rel < HEADER_SIZE:
            buf = disk_io.pread(fd, min(want, end - position), position)
            buf_start, rel = position, 0
            if len(buf) < HEADER_SIZE:
                raise CorruptLog(f"no whole batch header at position {position}")
        header = read_header(buf, rel)
        size = header.size
        if size < EMPTY_BATCH_SIZE or position + size > end:
            raise CorruptLog(f"batch at position {position} has an impossible length {size}")
        yield position, header
        position += size
        # After a batch larger than a chunk, read just the next header, not a whole chunk.
        want = HEADER_SIZE if size >= chunk_bytes else chunk_bytes


def iter_valid_batches(
    fd: int, end: int, chunk_bytes: int = RECOVERY_CHUNK_BYTES
) -> Iterator[tuple[int, BatchHeader]]:
    """``(position, header)`` of each intact batch from position 0, stopping at the first
    one that is torn, malformed or fails its CRC.

    Only the file's own size bounds a batch's length here, not ``max_batch_bytes``: lowering
    that setting must never make recovery discard batches that were legal when written.
    """
    position = 0
    while position < end:
        buf = disk_io.pread(fd, min(chunk_bytes, end - position), position)
        if len(buf) >= LENGTH_PREFIX_SIZE:
            _, size = peek_length(buf)
            if len(buf) < size <= end - position:
                buf = disk_io.pread(fd, size, position)  # one batch larger than a chunk
        consumed, views = valid_prefix(buf, max_batch_bytes=end - position)
        if not views:
            return
        for view in views:
            yield position + view.position, view.header
        position += consumed
