"""One broker's partition log: the real :class:`PartitionLog` on disk, and the batches it
holds as the checker reads them.

Why real files: the log is where replication's promises end up (offsets, leader epochs,
the leader-epoch cache, truncation, recovery after a crash, the recovery point that gates
the high watermark when flushes are forced). Running the real log, opened again after
every simulated crash, keeps the simulation honest about all of it. The checker compares
batches across replicas by a payload id; the simulation stamps it as every record's
timestamp, so it is read from batch headers alone.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from pathlib import Path

from rillet.partition_store.config import LogConfig
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import build_batch, read_header

from .outcome import Violation

TOPIC = "sim"
_READ_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class Batch:
    base: int
    count: int
    epoch: int
    payload: int  # unique per produce attempt: identifies the batch across replicas

    @property
    def end(self) -> int:
        return self.base + self.count


def encode_batch(count: int, payload: int) -> bytes:
    """A record batch of ``count`` records stamped with ``payload`` (the checker's id)."""
    return build_batch([(payload, None, b"v", None)] * count)


class BrokerLog:
    """The partition directory of one broker: survives its crashes, reopened (and
    recovered) by each start. :attr:`batches` mirrors the log for the checker; it is
    brought up to date by :meth:`sync` after every event and rebuilt from the files at
    every open, where recovery must find exactly what the crash left."""

    def __init__(self, directory: Path, config: LogConfig) -> None:
        self.directory = directory
        self.config = config
        self.plog: PartitionLog | None = None
        self.batches: list[Batch] = []
        self.bases: list[int] = []
        self.by_base: dict[int, Batch] = {}

    @property
    def log_end_offset(self) -> int:
        return self.batches[-1].end if self.batches else 0

    def open(self, now_ms: int) -> PartitionLog:
        """A process start: open the directory as a node does (recovery runs)."""
        plog = PartitionLog.open(self.directory, self.config, now_ms, TOPIC, 0)
        self.plog = plog
        before = self.batches
        self.batches, self.bases, self.by_base = [], [], {}
        self._read_from(plog.log_start_offset)
        if self.batches != before:
            raise Violation(
                f"{self.directory.name}: recovery after a crash found {len(self.batches)} "
                f"batches ending at {self.log_end_offset}, the crash left {len(before)}"
            )
        return plog

    def crash(self) -> None:
        """SIGKILL: the files stay as written (the page cache survives a process crash);
        nothing is flushed or closed cleanly."""
        if self.plog is not None:
            self.plog.release()
            self.plog = None

    def close(self) -> None:
        if self.plog is not None:
            self.plog.close()
            self.plog = None

    def sync(self) -> tuple[list[Batch], list[Batch]]:
        """Bring :attr:`batches` to the log: (batches a truncation removed, batches
        appended). One event never both cuts and appends, so comparing ends suffices."""
        plog = self.plog
        if plog is None:
            return [], []
        end = plog.log_end_offset
        removed: list[Batch] = []
        if self.batches and plog.log_start_offset > self.batches[0].base:
            removed, self.batches, self.bases, self.by_base = self.batches, [], [], {}
        elif end < self.log_end_offset:
            i = bisect.bisect_left(self.bases, end)
            if i < len(self.bases) and self.bases[i] != end:
                raise Violation(f"{self.directory.name}: cut at {end}, inside a batch")
            removed = self.batches[i:]
            del self.batches[i:]
            del self.bases[i:]
            for b in removed:
                del self.by_base[b.base]
        appended = self._read_from(max(self.log_end_offset, plog.log_start_offset))
        return removed, appended

    def visible(self, high_watermark: int) -> tuple[Batch, ...]:
        return tuple(self.batches[: bisect.bisect_left(self.bases, high_watermark)])

    def _read_from(self, offset: int) -> list[Batch]:
        plog = self.plog
        assert plog is not None
        appended: list[Batch] = []
        while offset < plog.log_end_offset:
            region = plog.read(offset, _READ_BYTES).region
            if region is None:
                break
            data = os.pread(region.fd, region.length, region.position)
            position = 0
            while position < len(data):
                h = read_header(data, position)
                batch = Batch(
                    h.base_offset, h.last_offset_delta + 1, h.leader_epoch, h.first_timestamp_ms
                )
                self.batches.append(batch)
                self.bases.append(batch.base)
                self.by_base[batch.base] = batch
                appended.append(batch)
                position += h.size
                offset = batch.end
        return appended
