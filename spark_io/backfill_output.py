"""The backfill output folder's housekeeping: one run at a time, no leftovers, durable files.

A run stages its range under ``_staging`` and retires the ranges it replaces into ``_trash``
(backfill_job.py says why that makes re-runs exactly once); a run killed part-way leaves either
behind, and the next run removes them before it starts. These helpers only touch the
filesystem (flock, rmtree, fsync) and decide nothing about offsets.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from rillet.spark_io.errors import BackfillError
from rillet.wire.atomic_file import fsync_dir

# The job's logger, so that everything one run logs is under one name.
log = logging.getLogger("rillet.spark_io.backfill_job")

STAGING = "_staging"
TRASH = "_trash"
LOCK = "_rillet_backfill.lock"


@contextlib.contextmanager
def locked(output: Path) -> Iterator[None]:
    """One run per output folder: an exclusive flock on its lock file, which names the
    holder. The kernel releases it when the holder's process ends however it ends, so a
    killed run never leaves a stale lock behind."""
    output.mkdir(parents=True, exist_ok=True)
    with open(output / LOCK, "a+") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BackfillError(_refusal(output, f)) from None
        try:
            f.seek(0)
            f.truncate()
            f.write(f"pid {os.getpid()} on {socket.gethostname()} since {_now()}\n")
            f.flush()
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def ensure_free(output: Path) -> None:
    """Raise BackfillError naming the holder if a run holds ``output`` now: checked before
    a Spark session is started, so a second run is refused in a moment, not after Spark's
    start-up (the run itself takes the lock again for its whole length)."""
    if not (output / LOCK).exists():
        return
    with open(output / LOCK, "a+") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BackfillError(_refusal(output, f)) from None
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _refusal(output: Path, f: IO[str]) -> str:
    f.seek(0)
    holder = f.read().strip() or "a process that has not said who it is yet"
    return f"another backfill is running on {output} ({holder})"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def clean_leftovers(output: Path) -> None:
    """Delete what killed runs left: staged ranges never published, retired ranges."""
    for name in (STAGING, TRASH):
        d = output / name
        if d.exists():
            for child in d.iterdir():
                log.info("removing %s left by an earlier run", child)
                shutil.rmtree(child, ignore_errors=False)


def parquet_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.parquet"))


def fsync_tree(root: Path) -> None:
    """Make the staged files durable before they become visible."""
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(Path(dirpath))
