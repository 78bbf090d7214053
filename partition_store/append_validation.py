"""What the log accepts: every batch checked before a single byte is written.

A produce request is all-or-nothing per partition, so validation runs over all of its batches
first. The checks are per batch, never per record: the fixed header's structure, the size
limit and the CRC-32C of the batch (C speed), which is all that protects stored data, since
the broker never decodes records.

Two extra invariants are checked here because recovery relies on them: offsets continue the
log without gaps, and leader epochs never decrease (both fields sit outside the CRC, so
recovery uses these rules to spot damage to them).
"""

from __future__ import annotations

from rillet.partition_store.errors import (
    InvalidLeaderEpoch,
    InvalidRecords,
    NonContiguousAppend,
    RecordTooLarge,
)
from rillet.partition_store.segment import PlacedBatch
from rillet.wire.batch import LENGTH_PREFIX_SIZE, BatchView, iter_batches, peek_length
from rillet.wire.errors import CorruptBatch

# Followers copy what a leader accepted, possibly under a larger max_batch_bytes than ours:
# refusing it would stall replication forever. Only the format bounds them.
FOLLOWER_MAX_BATCH_BYTES = LENGTH_PREFIX_SIZE + 0x7FFFFFFF
MAX_OFFSETS_PER_APPEND = 0x7FFFFFFF


def validate_batches(
    records: bytes | bytearray | memoryview, max_batch_bytes: int
) -> list[BatchView]:
    """Every batch in ``records``, CRC-checked; raises InvalidRecords / RecordTooLarge."""
    if len(records) == 0:
        raise InvalidRecords("no batches to append")
    views: list[BatchView] = []
    try:
        views.extend(iter_batches(records, max_batch_bytes))
    except CorruptBatch as exc:
        failed_at = views[-1].position + views[-1].header.size if views else 0
        if len(records) - failed_at >= LENGTH_PREFIX_SIZE:
            _, size = peek_length(records, failed_at)
            if size > max_batch_bytes:
                raise RecordTooLarge(f"batch {len(views)}: {exc}") from exc
        raise InvalidRecords(f"batch {len(views)} (byte {failed_at}): {exc}") from exc
    return views


def place_leader_batches(
    views: list[BatchView], first_offset: int, leader_epoch: int, last_epoch: int
) -> list[PlacedBatch]:
    """Assign offsets from ``first_offset``: the leader owns base_offset and leader_epoch."""
    _check_epoch(leader_epoch, last_epoch)
    placed = []
    next_offset = first_offset
    for view in views:
        h = view.header
        if h.record_count == 0:  # only the log cleaner writes those; followers copy them
            raise InvalidRecords(f"batch at byte {view.position} has no records")
        end = next_offset + h.last_offset_delta + 1
        placed.append(PlacedBatch(view.position, h.size, next_offset, end, h.max_timestamp_ms))
        next_offset = end
    if next_offset - first_offset > MAX_OFFSETS_PER_APPEND:
        raise InvalidRecords(f"{next_offset - first_offset} records in one append")
    return placed


def place_follower_batches(
    views: list[BatchView], log_end_offset: int, last_epoch: int
) -> tuple[list[PlacedBatch], int]:
    """Check that replicated batches continue the log; returns them and their last epoch."""
    placed = []
    expected, epoch = log_end_offset, last_epoch
    for view in views:
        h = view.header
        if h.base_offset != expected:
            raise NonContiguousAppend(
                f"batch at offset {h.base_offset} does not continue the log at {expected}"
            )
        _check_epoch(h.leader_epoch, epoch)
        placed.append(
            PlacedBatch(view.position, h.size, expected, h.next_offset, h.max_timestamp_ms)
        )
        expected, epoch = h.next_offset, h.leader_epoch
    if expected - log_end_offset > MAX_OFFSETS_PER_APPEND:
        raise InvalidRecords(f"{expected - log_end_offset} records in one append")
    return placed, epoch


def _check_epoch(epoch: int, last_epoch: int) -> None:
    if epoch < 0 or epoch < last_epoch:
        raise InvalidLeaderEpoch(
            f"leader epoch {epoch} is below the log's latest epoch {max(last_epoch, 0)}"
        )
