"""Names of the files in a partition directory (docs/storage-format.md, "Directory layout").

Kept in one place so the loader, the segments and the checkpoints agree on them, and so an
operator reading the docs can map every file name to the code that owns it.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from rillet.wire.atomic_file import TMP_SUFFIX as ATOMIC_TMP_SUFFIX

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
# Aborted transactions whose marker is in the segment (transaction_index.py).
TXN_INDEX_SUFFIX = ".txnindex"
# A segment file renamed for deletion; unlinked file_delete_delay_ms later (or on open).
DELETED_SUFFIX = ".deleted"
# A checkpoint being written; renamed over its target once complete (or removed on open).
TMP_SUFFIX = ATOMIC_TMP_SUFFIX

SEGMENT_NAME_DIGITS = 20
# Relative offsets in the offset index are uint32; Kafka rolls before Int.MaxValue too.
MAX_RELATIVE_OFFSET = 0x7FFFFFFF

PARTITION_META_FILE = "partition.meta"
RECOVERY_POINT_FILE = "recovery-point-checkpoint"
LOG_START_OFFSET_FILE = "log-start-offset-checkpoint"
CLEAN_SHUTDOWN_FILE = "clean-shutdown"
# Reserved for replica state (issue 5): the leader-epoch cache (epoch -> start offset) and
# the idempotent producers' last sequences. Both are small checkpoints written like the
# others (partition_files.py) and must be truncated whenever the log is (see log.py).
LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"
# The replica's last known high watermark (written by the broker every few seconds and on
# close): a restarted replica exposes nothing above it until its leader says more is committed.
HIGH_WATERMARK_FILE = "high-watermark-checkpoint"
PRODUCER_STATE_FILE = "producer-state"


class SegmentPaths(NamedTuple):
    log: Path
    offset_index: Path
    time_index: Path
    txn_index: Path


def segment_stem(base_offset: int) -> str:
    """The 20-digit decimal name that sorts segments by offset, as Kafka names them."""
    return f"{base_offset:0{SEGMENT_NAME_DIGITS}d}"


def segment_paths(directory: Path, base_offset: int) -> SegmentPaths:
    stem = segment_stem(base_offset)
    return SegmentPaths(
        directory / (stem + LOG_SUFFIX),
        directory / (stem + INDEX_SUFFIX),
        directory / (stem + TIME_INDEX_SUFFIX),
        directory / (stem + TXN_INDEX_SUFFIX),
    )


def parse_segment_base(name: str, suffix: str = LOG_SUFFIX) -> int | None:
    """Base offset of a segment file name such as ``00000000000000004711.log``, else None."""
    if not name.endswith(suffix):
        return None
    stem = name[: -len(suffix)]
    if len(stem) != SEGMENT_NAME_DIGITS or not stem.isdigit():
        return None
    return int(stem)
