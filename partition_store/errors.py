"""Exception root of the partition store.

Every error the store raises on purpose is a :class:`StoreError`, so the broker can answer a
request with a typed error code instead of losing a connection task. ``OSError`` from the
file system is deliberately *not* wrapped: a full disk or an I/O error is a storage failure
the broker reports as such (KAFKA_STORAGE_ERROR), not a property of the request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rillet.wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from rillet.partition_store.batch_verify import BatchDamage


class StoreError(Exception):
    """Root of every error raised by ``rillet.partition_store``. ``error_code`` is what a
    request that met it is answered with (each kind names its own)."""

    error_code: ClassVar[ErrorCode] = ErrorCode.STORAGE_ERROR


class StoreConfigError(StoreError, ValueError):
    """A LogConfig value is out of range (also a ValueError, for config loaders)."""


class OffsetOutOfRange(StoreError):
    """The requested offset is below the log start or above the log end."""

    error_code = ErrorCode.OFFSET_OUT_OF_RANGE

    def __init__(self, offset: int, log_start_offset: int, log_end_offset: int) -> None:
        super().__init__(f"offset {offset} is outside [{log_start_offset}, {log_end_offset}]")
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset


class InvalidRecords(StoreError):
    """Appended bytes are not a sequence of valid batches (structure or CRC)."""

    error_code = ErrorCode.CORRUPT_MESSAGE


class RecordTooLarge(InvalidRecords):
    """A batch exceeds ``max_batch_bytes``."""

    error_code = ErrorCode.MESSAGE_TOO_LARGE


class NonContiguousAppend(StoreError):
    """A follower append does not start at the log end, or its batches leave gaps."""


class InvalidLeaderEpoch(StoreError):
    """An append would lower the leader epoch recorded in the log (or use a negative one).

    Epochs in a log never decrease (replication's divergence check relies on it), and
    recovery treats a lowered epoch as corruption, so the store refuses to write one.
    """

    error_code = ErrorCode.FENCED_LEADER_EPOCH


class InvalidTruncation(StoreError):
    """truncate_to was asked for an offset that is not a batch boundary of this log."""


class PartitionMismatch(StoreError):
    """``partition.meta`` names another topic or partition than the one being opened."""


class TopicIdMismatch(PartitionMismatch):
    """The directory belongs to an earlier topic of the same name (deleted since)."""


class LogClosed(StoreError):
    """The log was closed or deleted; it serves nothing any more."""


class CorruptLog(StoreError):
    """Data the store trusted turned out malformed (e.g. a bad header in a trusted segment).

    Recovery never raises this for a torn or corrupt tail: it truncates instead.
    """


class LogDamaged(CorruptLog):
    """A stored batch failed its CRC (or structure) check: bit rot in trusted data.

    ``damage`` names the segment file, the byte position and the offset of the batch. The
    log serves nothing of that batch; the broker repairs the replica from a healthy one.
    """

    def __init__(self, damage: BatchDamage) -> None:
        super().__init__(f"damaged batch in {damage}")
        self.damage = damage


class CleanerProcessError(StoreError):
    """A clean run in a child process failed: the child was killed or crashed, answered
    something that is not a result for its job, or reported the error that stopped the
    clean. Nothing of that clean is installed."""
