"""Putting a cleaned segment in place of its sources so that a crash at any point loses
nothing: Kafka's ``.cleaned`` -> ``.swap`` -> replace, in our file names.

Steps (``S`` is the cleaned segment's base offset, the first source's):

1. *staged*: the worker wrote ``cleaner-staging/S.log`` and its indexes, fsynced. A crash
   now: the staging directory is removed on open; the sources are untouched.
2. *commit* (:func:`commit_swap`): the indexes, then the ``.log``, are renamed to
   ``S.index.swap``, ``S.timeindex.swap``, ``S.log.swap`` in the partition directory. The
   ``.log.swap`` rename is the commit point: from then on the clean is finished on open.
3. *retire*: each source segment is renamed ``*.deleted`` (the log's deferred deletion, so
   reads in flight finish).
4. *finish* (:func:`finish_swap`): the swap files are renamed to ``S.index``,
   ``S.timeindex``, ``S.log``.

On open (:func:`complete_swaps`), before anything else: for each ``S.log.swap``, every
segment whose base offset lies in ``[S, end of the swap)`` is deleted (it is one of the
sources: the swap holds the same offsets), then the swap files are renamed into place; an
index ``.swap`` without its ``.log.swap`` belongs to an uncommitted clean and is removed,
and so is the staging directory. Index files are derived data: one that is missing is
rebuilt from the ``.log`` by recovery.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from rillet.partition_store.batch_scan import iter_valid_batches
from rillet.partition_store.layout import LOG_SUFFIX, parse_segment_base, segment_paths
from rillet.partition_store.segment_cleaner import staging_dir
from rillet.wire import disk_io

SWAP_SUFFIX = ".swap"


def swap_path(path: Path) -> Path:
    return path.with_name(path.name + SWAP_SUFFIX)


def commit_swap(directory: Path, base_offset: int) -> None:
    """Step 2: move the staged files in as ``.swap`` files, the ``.log`` last."""
    staged = segment_paths(staging_dir(directory), base_offset)
    final = segment_paths(directory, base_offset)
    for source, target in (
        (staged.offset_index, final.offset_index),
        (staged.time_index, final.time_index),
        (staged.log, final.log),
    ):
        if source.exists() or source == staged.log:
            disk_io.replace(source, swap_path(target))


def finish_swap(directory: Path, base_offset: int) -> None:
    """Step 4: the swap files take the segment's names (the sources are gone by now)."""
    final = segment_paths(directory, base_offset)
    for target in (final.offset_index, final.time_index, final.log):
        swap = swap_path(target)
        if swap.exists():
            disk_io.replace(swap, target)
        elif target != final.log:
            disk_io.unlink_missing_ok(target)  # a stale index would describe the old log


def discard_staged(directory: Path, base_offset: int) -> None:
    """An uncommitted clean that will not be installed (the log changed meanwhile)."""
    for path in segment_paths(staging_dir(directory), base_offset):
        disk_io.unlink_missing_ok(path)


def remove_staging(directory: Path) -> None:
    """After a clean: the staging directory, empty by now (left if not)."""
    try:
        os.rmdir(staging_dir(directory))
    except OSError:
        pass


def complete_swaps(directory: Path) -> int:
    """Finish every committed clean and drop every uncommitted one (see the module
    docstring); returns how many swaps were completed."""
    shutil.rmtree(staging_dir(directory), ignore_errors=True)
    names = [p.name for p in directory.iterdir()]
    swaps = sorted(
        b
        for n in names
        if n.endswith(SWAP_SUFFIX)
        and (b := parse_segment_base(n[: -len(SWAP_SUFFIX)], LOG_SUFFIX)) is not None
    )
    for base in swaps:
        swap = swap_path(segment_paths(directory, base).log)
        fd = disk_io.open_fd(swap, os.O_RDONLY)
        try:
            end = base
            for _, header in iter_valid_batches(fd, os.fstat(fd).st_size):
                end = header.next_offset
        finally:
            disk_io.close(fd)
        for name in names:
            other = parse_segment_base(name)
            if other is not None and base <= other < max(end, base + 1):
                for path in segment_paths(directory, other):
                    if other != base or path.suffix == LOG_SUFFIX:
                        disk_io.unlink_missing_ok(path)
        finish_swap(directory, base)
    for name in os.listdir(directory):
        if name.endswith(SWAP_SUFFIX):  # index swaps of an uncommitted clean
            disk_io.unlink(directory / name)
    return len(swaps)
