"""Which leader epoch wrote which offsets: the leader-epoch cache of one partition.

Every batch carries the epoch of the leader that appended it; the cache keeps, per epoch,
the first offset it wrote. That answers the question replication asks after a leader change
(Kafka's KIP-101/279 "OffsetsForLeaderEpoch"): *up to which offset does my log agree with
the leader's for epoch E?* The leader answers with the start offset of the first epoch after
E; a follower truncates its log there before fetching, so no replica keeps a suffix the new
leader never had.

Pure data: the log feeds it appends and truncations, :class:`PartitionFiles` persists it as
``leader-epoch-checkpoint`` (text: a version line, a count line, then ``epoch start_offset``
lines, like Kafka's file).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from rillet.partition_store.errors import StoreError

UNDEFINED_EPOCH = -1
UNDEFINED_OFFSET = -1
CHECKPOINT_VERSION = 0


class LeaderEpochError(StoreError):
    """An epoch assignment that would make the cache non-monotonic, or a bad checkpoint."""


@dataclass(frozen=True, slots=True)
class EpochEntry:
    epoch: int
    start_offset: int


class LeaderEpochCache:
    """Epoch start offsets, strictly increasing in both epoch and offset."""

    def __init__(self, entries: list[EpochEntry] | None = None) -> None:
        self._entries: list[EpochEntry] = []
        for e in entries or []:
            self.assign(e.epoch, e.start_offset)

    @property
    def entries(self) -> list[EpochEntry]:
        return list(self._entries)

    def latest_epoch(self) -> int:
        return self._entries[-1].epoch if self._entries else UNDEFINED_EPOCH

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that ``epoch`` starts at ``start_offset``; True when this is news.

        Appending a batch of the latest epoch again changes nothing. An epoch or offset
        below the latest entry is a bug in the caller (the log validates epochs before it
        appends), refused with LeaderEpochError rather than silently reordering history.
        """
        if epoch < 0 or start_offset < 0:
            raise LeaderEpochError(f"epoch {epoch} at offset {start_offset}: negative")
        if self._entries:
            last = self._entries[-1]
            if epoch == last.epoch:
                return False
            if epoch < last.epoch or start_offset < last.start_offset:
                raise LeaderEpochError(
                    f"epoch {epoch} at {start_offset} would follow epoch {last.epoch} "
                    f"at {last.start_offset}"
                )
            if start_offset == last.start_offset:
                self._entries.pop()  # the previous epoch wrote nothing: it is superseded
        self._entries.append(EpochEntry(epoch, start_offset))
        return True

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) for a follower whose last fetched epoch is ``epoch``.

        The end offset is where ``epoch`` ended in this log: the start of the next higher
        epoch, or the log end for the latest epoch. The epoch returned is the largest one
        not above ``epoch`` that this log knows (the follower truncates to the smaller of
        the end offset and its own end for that epoch). Unknown: (-1, -1).
        """
        if epoch == UNDEFINED_EPOCH or not self._entries:
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        if epoch == self.latest_epoch():
            return epoch, log_end_offset
        epochs = [e.epoch for e in self._entries]
        higher = bisect.bisect_right(epochs, epoch)
        if higher == len(epochs):
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET  # newer than anything this log has seen
        end = self._entries[higher].start_offset
        if higher == 0:
            return epoch, end  # older than the first known epoch: it ended where that began
        return self._entries[higher - 1].epoch, end

    def truncate_from_end(self, end_offset: int) -> None:
        """The log was cut at ``end_offset``: forget epochs that start at or after it."""
        while self._entries and self._entries[-1].start_offset >= end_offset:
            self._entries.pop()

    def truncate_from_start(self, start_offset: int) -> None:
        """Retention moved the log start: drop epochs wholly below it, clamp the first one."""
        keep = bisect.bisect_right([e.start_offset for e in self._entries], start_offset) - 1
        if keep <= 0:
            if self._entries and self._entries[0].start_offset < start_offset:
                self._entries[0] = EpochEntry(self._entries[0].epoch, start_offset)
            return
        first = self._entries[keep]
        self._entries = [EpochEntry(first.epoch, start_offset), *self._entries[keep + 1 :]]

    # -- checkpoint format ----------------------------------------------------------------

    def encode(self) -> bytes:
        lines = [str(CHECKPOINT_VERSION), str(len(self._entries))]
        lines += [f"{e.epoch} {e.start_offset}" for e in self._entries]
        return ("\n".join(lines) + "\n").encode("ascii")

    @classmethod
    def decode(cls, data: bytes) -> LeaderEpochCache:
        """Parse a checkpoint; LeaderEpochError when it is damaged (rebuild from the log)."""
        try:
            lines = data.decode("ascii").splitlines()
            if int(lines[0]) != CHECKPOINT_VERSION:
                raise LeaderEpochError(f"unsupported checkpoint version {lines[0]!r}")
            count = int(lines[1])
            if count != len(lines) - 2:
                raise LeaderEpochError(f"checkpoint says {count} entries, has {len(lines) - 2}")
            entries = []
            for line in lines[2:]:
                epoch, offset = line.split()
                entries.append(EpochEntry(int(epoch), int(offset)))
        except (UnicodeDecodeError, IndexError, ValueError) as exc:
            raise LeaderEpochError(f"unreadable leader-epoch checkpoint: {exc}") from None
        return cls(entries)
