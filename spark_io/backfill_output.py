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
from collections.abc import Iterator
from pathlib import Path

from rillet.spark_io.errors import BackfillError
from rillet.wire.atomic_file import fsync_dir

# The job's logger, so that everything one run logs is under one name.
log = logging.getLogger("rillet.spark_io.backfill_job")

STAGING = "_staging"
TRASH = "_trash"
LOCK = "_rillet_backfill.lock"


@contextlib.contextmanager
def locked(output: Path) -> Iterator[None]:
    output.mkdir(parents=True, exist_ok=True)
    with open(output / LOCK, "a+") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BackfillError(f"another backfill is running on {output}") from None
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


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
