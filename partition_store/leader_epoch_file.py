"""The leader-epoch cache of one partition log, kept in step with the log and on disk.

:class:`~rillet.partition_store.leader_epoch_cache.LeaderEpochCache` is pure data; this is
the part the log drives. It is written to ``leader-epoch-checkpoint`` when the log is
truncated and when it is closed; a new epoch (a leader change) only marks it unwritten, so
neither appends nor leader changes pay an fsync.

The checkpoint and the log are two files, so a crash can leave them out of step: an epoch
written to the log but not yet to the checkpoint, or a checkpoint naming offsets the log lost.
On open the cache is therefore cut to the recovered log (start and end) and checked against
the epoch of the log's last batch; when they disagree, or the checkpoint is missing or
damaged, the cache is rebuilt from the batch headers (never the records) of every segment.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from rillet.partition_store.batch_scan import iter_headers
from rillet.partition_store.layout import LEADER_EPOCH_CHECKPOINT_FILE
from rillet.partition_store.leader_epoch_cache import LeaderEpochCache, LeaderEpochError
from rillet.partition_store.segment import LogSegment
from rillet.wire.atomic_file import SyncBatch, write_atomically

log = logging.getLogger(__name__)


class LeaderEpochFile:
    """Epoch start offsets of a log, persisted whenever they change."""

    def __init__(self, path: Path, cache: LeaderEpochCache) -> None:
        """Use :meth:`open`."""
        self._path = path
        self._cache = cache
        self.rebuilt = False  # True when open had to scan the log (recovery statistics)
        self._unwritten = False  # epochs noted since the file was last written

    @classmethod
    def empty(cls, directory: Path) -> LeaderEpochFile:
        """The history of a new, empty log (no file yet: none is the same empty history)."""
        return cls(directory / LEADER_EPOCH_CHECKPOINT_FILE, LeaderEpochCache())

    @classmethod
    def open(
        cls,
        directory: Path,
        segments: Sequence[LogSegment],
        log_start_offset: int,
        last_epoch: int,
    ) -> LeaderEpochFile:
        """Load the checkpoint and make it agree with the recovered ``segments``."""
        path = directory / LEADER_EPOCH_CHECKPOINT_FILE
        log_end_offset = segments[-1].next_offset
        cache: LeaderEpochCache | None
        try:
            cache = LeaderEpochCache.decode(path.read_bytes())
        except FileNotFoundError:
            cache = None
        except (OSError, LeaderEpochError) as exc:
            log.warning("%s: %s; rebuilding it from the log", path, exc)
            cache = None
        if cache is not None:
            cache.truncate_from_end(log_end_offset)
            cache.truncate_from_start(log_start_offset)
            if cache.latest_epoch() != last_epoch:
                cache = None  # the log has epochs the checkpoint missed (crash in between)
        tracker = cls(path, cache or LeaderEpochCache())
        if cache is None:
            tracker._rebuild(segments, log_start_offset)
        return tracker

    def _rebuild(self, segments: Sequence[LogSegment], log_start_offset: int) -> None:
        cache = LeaderEpochCache()
        for segment in segments:
            for _, header in iter_headers(segment.fd, 0, segment.size):
                if header.leader_epoch != cache.latest_epoch() and header.leader_epoch >= 0:
                    cache.assign(header.leader_epoch, header.base_offset)
        cache.truncate_from_start(log_start_offset)
        self._cache = cache
        self.rebuilt = True
        if cache.entries or self._path.exists():
            self._write()
        # else: a new, empty log; no file is the same empty history, and creating thousands
        # of partitions saves an fsynced write each

    # -- queries ----------------------------------------------------------------------------

    @property
    def cache(self) -> LeaderEpochCache:
        return self._cache

    def latest_epoch(self) -> int:
        return self._cache.latest_epoch()

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) answering a follower whose last fetched epoch is ``epoch``."""
        return self._cache.end_offset_for(epoch, log_end_offset)

    # -- changes ----------------------------------------------------------------------------

    def note_batch(self, epoch: int, base_offset: int) -> None:
        """A batch of ``epoch`` was appended at ``base_offset`` (or a leader starts
        ``epoch`` at its log end); records a new epoch.

        A new epoch is not written at once but on the next truncation or :meth:`close`.
        Until then the file lags the log, which open already handles: a file whose latest
        epoch is not that of the log's last batch (or no file) is rebuilt from the batch
        headers, as after a crash between the two writes. A leader change of thousands of
        partitions, and the first records of a new topic's thousands, therefore cost no
        fsync each on the event loop.
        """
        if epoch == self._cache.latest_epoch():
            return  # the append path: nothing changes
        if self._cache.assign(epoch, base_offset):
            self._unwritten = True

    def close(self, batch: SyncBatch | None = None) -> None:
        """Write a history :meth:`note_batch` left unwritten (a clean close): durable at
        once, or when ``batch`` commits."""
        if self._unwritten:
            self._write(batch)

    def truncate_from_end(self, end_offset: int) -> None:
        before = len(self._cache.entries)
        self._cache.truncate_from_end(end_offset)
        if len(self._cache.entries) != before:
            self._write()

    def truncate_from_start(self, start_offset: int) -> None:
        before = self._cache.entries
        self._cache.truncate_from_start(start_offset)
        if self._cache.entries != before:
            self._write()

    def _write(self, batch: SyncBatch | None = None) -> None:
        write_atomically(self._path, self._cache.encode(), batch=batch)
        self._unwritten = False
