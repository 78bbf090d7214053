"""Per-partition log settings, with Kafka's defaults.

The broker builds one of these per topic (node defaults plus topic overrides, spelt as
Kafka spells them: ``segment.bytes``, ``retention.ms`` ...); docs/configuration.md and
docs/storage-format.md explain what each trades.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.partition_store.errors import StoreConfigError
from rillet.wire.batch import MIN_BATCH_SIZE

DAY_MS = 24 * 3600 * 1000
# Byte positions in the offset index are uint32; Kafka caps segments at Int.MaxValue too.
MAX_SEGMENT_BYTES = 0x7FFFFFFF
CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"
TIMESTAMP_TYPES = (CREATE_TIME, LOG_APPEND_TIME)
HOUR_MS = 3600 * 1000
# cleanup.policy values (Kafka's list, normalised to this order).
DELETE_POLICY = "delete"
COMPACT_POLICY = "compact"
CLEANUP_POLICIES = (DELETE_POLICY, COMPACT_POLICY, "compact,delete")
LONG_MAX = (1 << 63) - 1


@dataclass(frozen=True, slots=True)
class LogConfig:
    """Immutable: a topic config change builds a new one (``dataclasses.replace``)."""

    segment_bytes: int = 1 << 30
    segment_ms: int = 7 * DAY_MS
    retention_ms: int = 7 * DAY_MS  # -1 keeps forever
    retention_bytes: int = -1  # per partition; -1 = no limit
    index_interval_bytes: int = 4096
    max_batch_bytes: int = (1 << 20) | 1024  # largest batch a producer may append
    flush_messages: int = -1  # fsync after this many records; -1 = never force
    flush_ms: int = -1  # fsync when the oldest unflushed append is this old; -1 = never
    file_delete_delay_ms: int = 60_000
    # Which clock stamps records: the producer's (CreateTime) or the leader's at append
    # (LogAppendTime: the leader sets the batch's max timestamp; records report it).
    message_timestamp_type: str = CREATE_TIME
    # CreateTime batches stamped further from the leader's clock are refused (INVALID_TIMESTAMP).
    # Past: any age by default, as Kafka (Long.MAX): retention counts a segment's age from its
    # last write too (retention.py), so an old stamp cannot get fresh data deleted. -1 = the
    # topic's retention_ms (an opt-in: refuse what time retention would not keep by its
    # stamp; no limit when retention keeps forever). Future: a stamp ahead would pin segments.
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = HOUR_MS
    # Log compaction (compaction_plan.py): "delete" (retention only), "compact" (the log
    # cleaner keeps the latest record per key) or "compact,delete" (both).
    cleanup_policy: str = DELETE_POLICY
    delete_retention_ms: int = DAY_MS  # how long a cleaned tombstone stays readable
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX

    def __post_init__(self) -> None:
        checks = [
            (
                MIN_BATCH_SIZE <= self.segment_bytes <= MAX_SEGMENT_BYTES,
                f"segment_bytes must be between {MIN_BATCH_SIZE} and {MAX_SEGMENT_BYTES}",
            ),
            (self.segment_ms >= 1, "segment_ms must be positive"),
            (self.retention_ms >= -1, "retention_ms must be >= 0, or -1 to keep forever"),
            (self.retention_bytes >= -1, "retention_bytes must be >= 0, or -1 for no limit"),
            (self.index_interval_bytes >= 0, "index_interval_bytes must be >= 0"),
            (
                MIN_BATCH_SIZE <= self.max_batch_bytes <= MAX_SEGMENT_BYTES,
                f"max_batch_bytes must be between {MIN_BATCH_SIZE} and {MAX_SEGMENT_BYTES}",
            ),
            (
                self.flush_messages == -1 or self.flush_messages >= 1,
                "flush_messages must be >= 1, or -1 to never force an fsync",
            ),
            (self.flush_ms >= -1, "flush_ms must be >= 0, or -1 to never force an fsync"),
            (self.file_delete_delay_ms >= 0, "file_delete_delay_ms must be >= 0"),
            (
                self.message_timestamp_type in TIMESTAMP_TYPES,
                f"message_timestamp_type must be one of {', '.join(TIMESTAMP_TYPES)}",
            ),
            (
                self.message_timestamp_before_max_ms >= -1,
                "message_timestamp_before_max_ms must be >= 0, or -1 for retention_ms",
            ),
            (
                self.message_timestamp_after_max_ms >= 0,
                "message_timestamp_after_max_ms must be >= 0",
            ),
            (
                self.cleanup_policy in CLEANUP_POLICIES,
                f"cleanup_policy must be one of {', '.join(CLEANUP_POLICIES)}",
            ),
            (self.delete_retention_ms >= 0, "delete_retention_ms must be >= 0"),
            (
                0.0 <= self.min_cleanable_dirty_ratio <= 1.0,
                "min_cleanable_dirty_ratio must be between 0 and 1",
            ),
            (self.min_compaction_lag_ms >= 0, "min_compaction_lag_ms must be >= 0"),
            (self.max_compaction_lag_ms >= 1, "max_compaction_lag_ms must be >= 1"),
        ]
        for ok, message in checks:
            if not ok:
                raise StoreConfigError(message)

    @property
    def compacted(self) -> bool:
        """Whether the log cleaner compacts this log (keys required on produce)."""
        return COMPACT_POLICY in self.cleanup_policy

    @property
    def deletes(self) -> bool:
        """Whether retention deletes old segments of this log."""
        return DELETE_POLICY in self.cleanup_policy

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == LOG_APPEND_TIME

    def oldest_accepted_timestamp_ms(self, now_ms: int) -> int | None:
        """The oldest CreateTime stamp accepted at ``now_ms``; None when any age is."""
        before = self.message_timestamp_before_max_ms
        if before == -1:
            before = self.retention_ms
        return None if before < 0 else now_ms - before

    @property
    def forces_fsync(self) -> bool:
        """Whether either flush setting forces fsyncs (-1 is "never"; ``flush_ms = 0`` is
        "as soon as possible"). Read here, beside the sentinel, rather than re-derived by
        each caller: the replica once counted ``flush_ms = 0`` as no policy at all."""
        return self.flush_messages > 0 or self.flush_ms >= 0
