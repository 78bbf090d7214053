"""An fsync prepared on the event loop and run on a worker thread.

``PartitionLog.flush_plan()`` captures what must reach the disk for every offset below
``up_to_offset`` to be durable: duplicates of the descriptors of the segments holding
unflushed data (and of the indexes of sealed ones, which a restart trusts), plus the
partition directory (new segment files). :meth:`FlushPlan.run` fsyncs them and writes the
new recovery point to a temp file, touching nothing but its own descriptors and that file,
so the log may append, roll, truncate or delete segments meanwhile. Back on the event loop,
``PartitionLog.flush_completed(plan)`` renames the temp file over
``recovery-point-checkpoint`` (unless a truncation made the plan stale) and advances the
recovery point.

The checkpoint's rename is made durable by the next plan's directory fsync or by ``close()``;
until then a crash shows the previous recovery point, which only costs extra recovery work.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from rillet.partition_store.checkpoint import encode_int
from rillet.partition_store.errors import StoreError
from rillet.wire import disk_io
from rillet.wire.atomic_file import write_synced

_fdatasync = getattr(os, "fdatasync", disk_io.fsync)


@dataclass(slots=True)
class FlushPlan:
    up_to_offset: int  # every offset below this is durable once run() returns
    generation: int  # the log's truncation generation when planned
    checkpoint_tmp: Path  # run() writes up_to_offset here; flush_completed() renames it
    fds: list[int] = field(repr=False)  # duplicated descriptors, closed by run()
    dir_fd: int = field(repr=False)
    done: bool = False

    def run(self) -> None:
        """fdatasync every file, fsync the directory, write the checkpoint temp file.

        Blocking: call it from a worker thread. The descriptors are closed even if an fsync
        fails; the plan is then spent, and the next one covers the same data again.
        """
        if self.dir_fd < 0:
            raise StoreError("a flush plan runs only once")
        try:
            for fd in self.fds:
                disk_io.fdatasync(fd)
            disk_io.fsync(self.dir_fd)
            # Relative to the directory's fd: a topic deletion may rename it meanwhile, or
            # remove it (then there is nothing left to checkpoint).
            try:
                write_synced(self.checkpoint_tmp, encode_int(self.up_to_offset), self.dir_fd)
            except FileNotFoundError:
                pass
            self.done = True
        finally:
            self.discard()

    def discard(self) -> None:
        """Close the descriptors without syncing (a plan the caller decides not to run)."""
        fds, self.fds = self.fds, []
        dir_fd, self.dir_fd = self.dir_fd, -1
        for fd in [*fds, dir_fd]:
            if fd >= 0:
                disk_io.close(fd)
