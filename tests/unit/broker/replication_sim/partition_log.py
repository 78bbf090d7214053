"""The partition log of one replica, in memory.

Why it is modelled rather than real: replication only sees batches (base offset, record
count, leader epoch) and the leader-epoch cache, so a list of batches keeps runs fast and
their logs comparable, while the real :class:`LeaderEpochCache` is fed exactly as
partition_store/log.py feeds it. A batch's payload id identifies it across replicas, which
is what the checker compares.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from rillet.partition_store.leader_epoch_cache import LeaderEpochCache

from .outcome import Violation


@dataclass(frozen=True, slots=True)
class Batch:
    base: int
    count: int
    epoch: int
    payload: int  # unique per produce attempt: identifies the batch across replicas

    @property
    def end(self) -> int:
        return self.base + self.count


class SimLog:
    """``PartitionLog`` reduced to what replication sees (partition_store/log.py): batches
    at contiguous offsets, the epoch of the last batch, and the leader-epoch cache fed the
    way the real log feeds it (``note_batch`` on appends, ``truncate_from_end`` on cuts)."""

    def __init__(self) -> None:
        self.batches: list[Batch] = []
        self.bases: list[int] = []
        self.by_base: dict[int, Batch] = {}
        self.epochs = LeaderEpochCache()

    @property
    def log_end_offset(self) -> int:
        return self.batches[-1].end if self.batches else 0

    @property
    def last_batch_epoch(self) -> int:
        return self.batches[-1].epoch if self.batches else -1

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        return self.epochs.end_offset_for(epoch, self.log_end_offset)

    def start_leader_epoch(self, epoch: int) -> None:
        """As ``PartitionLog.start_leader_epoch``: a new leader's epoch starts at its end."""
        if epoch > self.epochs.latest_epoch():
            self._note_batch(epoch, self.log_end_offset)

    def _note_batch(self, epoch: int, base: int) -> None:
        if epoch != self.epochs.latest_epoch():
            self.epochs.assign(epoch, base)

    def _push(self, batch: Batch) -> None:
        self.batches.append(batch)
        self.bases.append(batch.base)
        self.by_base[batch.base] = batch

    def append_as_leader(self, count: int, epoch: int, payload: int) -> Batch:
        if epoch < self.last_batch_epoch:  # place_leader_batches' epoch check
            raise Violation(f"leader append in epoch {epoch} after epoch {self.last_batch_epoch}")
        batch = Batch(self.log_end_offset, count, epoch, payload)
        self._push(batch)
        self._note_batch(epoch, batch.base)
        return batch

    def append_as_follower(self, batches: tuple[Batch, ...]) -> None:
        expected, epoch = self.log_end_offset, self.last_batch_epoch
        for b in batches:  # place_follower_batches' checks
            if b.base != expected or b.epoch < epoch:
                raise Violation(
                    f"follower append of {b} refused: log end {expected}, last epoch {epoch}"
                )
            expected, epoch = b.end, b.epoch
        for b in batches:
            self._push(b)
            self._note_batch(b.epoch, b.base)

    def read(self, offset: int, max_batches: int) -> tuple[Batch, ...]:
        i = bisect.bisect_left(self.bases, offset)
        return tuple(self.batches[i : i + max_batches])

    def truncate_to(self, offset: int) -> list[Batch]:
        """Cut at a batch boundary; returns the removed batches (PartitionLog.truncate_to)."""
        end = self.log_end_offset
        if offset == end:
            self.epochs.truncate_from_end(offset)
            return []
        if not 0 <= offset < end or offset not in self.by_base:
            raise Violation(f"truncation to {offset} is not at a batch boundary below {end}")
        i = bisect.bisect_left(self.bases, offset)
        removed = self.batches[i:]
        del self.batches[i:]
        del self.bases[i:]
        for b in removed:
            del self.by_base[b.base]
        self.epochs.truncate_from_end(self.log_end_offset)
        return removed

    def truncate_at_or_below(self, offset: int) -> tuple[int, list[Batch]]:
        """PartitionLog.truncate_at_or_below: cut at ``offset`` or the start of its batch."""
        offset = max(min(offset, self.log_end_offset), 0)
        if offset < self.log_end_offset:
            offset = self.bases[bisect.bisect_right(self.bases, offset) - 1]
        return offset, self.truncate_to(offset)
