"""Exception root of the partition store."""

from __future__ import annotations


class StoreError(Exception):
    """Root of every error raised by ``rillet.partition_store``."""


class StoreConfigError(StoreError, ValueError):
    """A LogConfig value is out of range."""


class OffsetOutOfRange(StoreError):
    """The requested offset is below the log start or above the log end."""

    def __init__(self, offset: int, log_start_offset: int, log_end_offset: int) -> None:
        super().__init__(f"offset {offset} is outside [{log_start_offset}, {log_end_offset}]")
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset


class InvalidRecords(StoreError):
    """Appended bytes are not a sequence of valid batches (structure or CRC)."""


class RecordTooLarge(InvalidRecords):
    """A batch exceeds ``max_batch_bytes``."""


class NonContiguousAppend(StoreError):
    """A follower append does not start at the log end or its batches leave gaps."""


class InvalidTruncation(StoreError):
    """truncate_to was asked for an offset that is not a batch boundary of this log."""


class CorruptLog(StoreError):
    """On-disk state that recovery cannot repair (never raised for a torn tail)."""
