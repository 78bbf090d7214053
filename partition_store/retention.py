"""Which segments retention deletes: a pure decision over segment summaries.

Kept apart from the log so the policy can be read (and tested) on its own. Like Kafka's
``delete`` cleanup policy it removes whole segments only, oldest first, and never the active
segment: a segment goes when

- both its largest timestamp and its last write are more than ``retention_ms`` before now
  (time), or
- the partition would still hold at least ``retention_bytes`` without it (size), or
- all its offsets are below the log start offset (DeleteRecords, or an earlier deletion).

A ``compact``-only log (``cleanup.policy``) skips the first two: the log cleaner bounds it.
Deletion stops at the first segment that qualifies for none of these, so the log stays a
contiguous range of offsets.

The last write (the ``.log`` file's modification time) is where this departs from Kafka,
which goes by the largest timestamp alone. Producers may stamp records with any past time
(``message.timestamp.before.max.ms`` defaults to Kafka's unlimited): under Kafka's rule a
record stamped 1970 goes with the next retention pass after its segment rolls, minutes after
it was acknowledged. Here every record stays at least ``retention_ms`` after it was written;
records stamped in the future are bounded by ``message.timestamp.after.max.ms`` instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from rillet.partition_store.config import LogConfig
from rillet.partition_store.segment import SegmentInfo


def deletable_segment_count(
    segments: Sequence[SegmentInfo], config: LogConfig, now_ms: int, log_start_offset: int
) -> int:
    """How many of the oldest segments to delete now (the last one is always kept)."""
    remaining = sum(s.size_bytes for s in segments)
    count = 0
    for segment in segments[:-1]:
        expired = (
            config.deletes  # a compact-only log keeps segments for the cleaner
            and config.retention_ms >= 0
            and segment.size_bytes > 0
            and now_ms - max(segment.max_timestamp_ms, segment.last_written_ms)
            > config.retention_ms
        )
        oversize = (
            config.deletes
            and config.retention_bytes >= 0
            and remaining - segment.size_bytes >= config.retention_bytes
        )
        below_start = segment.next_offset <= log_start_offset
        if not (expired or oversize or below_start):
            break
        remaining -= segment.size_bytes
        count += 1
    return count
