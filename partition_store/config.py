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
        ]
        for ok, message in checks:
            if not ok:
                raise StoreConfigError(message)

    @property
    def forces_fsync(self) -> bool:
        """Whether either flush setting forces fsyncs (-1 is "never"; ``flush_ms = 0`` is
        "as soon as possible"). Read here, beside the sentinel, rather than re-derived by
        each caller: the replica once counted ``flush_ms = 0`` as no policy at all."""
        return self.flush_messages > 0 or self.flush_ms >= 0
