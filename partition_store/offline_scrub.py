"""Checking a stopped node's partition directories for bit rot, read-only.

``rillet scrub --data-dir`` on a node that is not running: every ``.log`` of every partition
directory is walked batch by batch (structure, CRC-32C, offset chain), nothing is written,
nothing is opened for writing. The tail of the last segment may be torn by a crash (recovery
cuts that when the node starts); that is reported as such, not as rot.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rillet.partition_store.batch_verify import BatchDamage, verify_file_range
from rillet.partition_store.layout import parse_segment_base, segment_paths
from rillet.partition_store.partition_files import PartitionFiles
from rillet.wire import disk_io


@dataclass(slots=True)
class PartitionScrubReport:
    name: str  # <topic>-<partition>
    segments: int = 0
    bytes_checked: int = 0
    damage: list[BatchDamage] = field(default_factory=list)  # one per damaged sealed segment
    torn_tail: BatchDamage | None = None  # the last segment's end (crash): recovery cuts it


def partition_dirs(data_dir: Path) -> Iterator[Path]:
    """Partition directories of a node's data directory, in name order."""
    for directory in sorted(data_dir.iterdir()):
        if directory.is_dir() and PartitionFiles(directory).read_meta() is not None:
            yield directory


def scrub_partition_dir(
    directory: Path, on_bytes: Callable[[int], None] | None = None
) -> PartitionScrubReport:
    """Check every segment of one partition directory; ``on_bytes`` is told each step's
    size (the CLI paces itself with it)."""
    report = PartitionScrubReport(directory.name)
    bases = sorted(b for p in directory.iterdir() if (b := parse_segment_base(p.name)) is not None)
    for i, base in enumerate(bases):
        path = segment_paths(directory, base).log
        fd = disk_io.open_fd(path, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            position, offset = 0, base
            while position < size:
                outcome = verify_file_range(fd, position, size, offset, max_bytes=4 << 20)
                if on_bytes is not None:
                    on_bytes(outcome.end_position - position)
                report.bytes_checked += outcome.end_position - position
                if outcome.damage_reason is not None:
                    damage = BatchDamage(
                        path, outcome.end_position, outcome.next_offset, outcome.damage_reason
                    )
                    if i == len(bases) - 1 and _looks_torn(outcome.damage_reason):
                        report.torn_tail = damage
                    else:
                        report.damage.append(damage)
                    break
                position, offset = outcome.end_position, outcome.next_offset
        finally:
            disk_io.close(fd)
        report.segments += 1
    return report


def _looks_torn(reason: str) -> bool:
    return "cut short" in reason or "cannot be read whole" in reason
