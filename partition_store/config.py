"""Per-partition log settings, with Kafka's defaults."""

from __future__ import annotations

from dataclasses import dataclass

from rillet.partition_store.errors import StoreConfigError

DAY_MS = 24 * 3600 * 1000


@dataclass(frozen=True, slots=True)
class LogConfig:
    """See docs/configuration.md for what each setting trades."""

    segment_bytes: int = 1 << 30
    segment_ms: int = 7 * DAY_MS
    retention_ms: int = 7 * DAY_MS  # -1 keeps forever
    retention_bytes: int = -1  # per partition; -1 = no limit
    index_interval_bytes: int = 4096
    max_batch_bytes: int = (1 << 20) | 1024
    flush_messages: int = -1  # fsync after this many records; -1 = never force
    flush_ms: int = -1  # fsync when the oldest unflushed append is this old; -1 = never
    file_delete_delay_ms: int = 60_000

    def __post_init__(self) -> None:
        checks = [
            (self.segment_bytes >= 1024, "segment_bytes must be at least 1024"),
            (self.segment_bytes <= 0x7FFFFFFF, "segment_bytes must fit in 31 bits"),
            (self.segment_ms >= 1, "segment_ms must be positive"),
            (self.retention_ms == -1 or self.retention_ms >= 0, "retention_ms must be >= 0 or -1"),
            (self.retention_bytes >= -1, "retention_bytes must be >= 0 or -1"),
            (self.index_interval_bytes >= 0, "index_interval_bytes must be >= 0"),
            (self.max_batch_bytes >= 128, "max_batch_bytes must be at least 128"),
            (self.flush_messages == -1 or self.flush_messages >= 1, "flush_messages: >= 1 or -1"),
            (self.flush_ms == -1 or self.flush_ms >= 0, "flush_ms must be >= 0 or -1"),
            (self.file_delete_delay_ms >= 0, "file_delete_delay_ms must be >= 0"),
        ]
        for ok, message in checks:
            if not ok:
                raise StoreConfigError(message)
