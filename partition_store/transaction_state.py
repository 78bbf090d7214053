"""Open transactions in one partition: what the last stable offset is made of.

A transactional producer's batches (attribute bit 4) are undecided until the coordinator
writes a marker (a control batch, see ``wire.control_batch``) into every partition the
transaction wrote to. Per producer id this table keeps the first offset of its ongoing
transaction here; the smallest of them is the *first unstable offset*, and the partition's
last stable offset (LSO) is ``min(high watermark, first unstable offset)``: read_committed
consumers never read at or past it.

A marker ends the producer's transaction. An abort becomes an :class:`AbortedTxn`, which the
log files in the aborted-transaction index of the segment holding the marker
(``transaction_index``); fetches at read_committed return those that overlap what they read.

The table is pure data driven by the log (leader and follower alike, from batch headers and
markers), saved with the producer-state snapshot and rebuilt from the batches after it.
Recent completions are remembered until their segment is sealed, so that cutting a marker
off the log (a follower's truncation) makes its transaction ongoing again.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.wire.batch import NO_PRODUCER_ID, BatchHeader
from rillet.wire.control_batch import Marker, is_control, is_transactional


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """An aborted transaction as the aborted-transaction index keeps it (Kafka's
    ``.txnindex`` entry): its producer, its first offset, the offset of its abort marker, and
    the partition's last stable offset once it was aborted."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    producer_id: int
    first_offset: int
    marker_offset: int
    committed: bool


class TransactionTable:
    """Per producer id, the first offset of its ongoing transaction in this partition."""

    def __init__(self) -> None:
        self.ongoing: dict[int, int] = {}
        self._recent: list[CompletedTxn] = []  # markers in the active segment, oldest first

    def on_data(self, header: BatchHeader, first_offset: int) -> None:
        """A data batch was appended at ``first_offset``: a transactional one opens (or
        continues) its producer's transaction."""
        pid = header.producer_id
        if is_transactional(header) and not is_control(header) and pid != NO_PRODUCER_ID:
            self.ongoing.setdefault(pid, first_offset)

    def on_marker(self, marker: Marker, offset: int) -> AbortedTxn | None:
        """A marker was appended at ``offset``: the producer's transaction here is over.
        Returns the aborted-index entry when it aborted a transaction that wrote here."""
        first = self.ongoing.pop(marker.producer_id, None)
        if first is None:
            return None  # the transaction wrote nothing here (or before the log start)
        self._recent.append(CompletedTxn(marker.producer_id, first, offset, marker.committed))
        if marker.committed:
            return None
        unstable = self.first_unstable_offset()
        lso = offset + 1 if unstable is None else min(unstable, offset + 1)
        return AbortedTxn(marker.producer_id, first, offset, lso)

    def first_unstable_offset(self) -> int | None:
        """The first offset of the earliest ongoing transaction; None when none is open."""
        return min(self.ongoing.values()) if self.ongoing else None

    def sealed_below(self, offset: int) -> None:
        """Segments below ``offset`` were sealed: their completions are history."""
        self._recent = [c for c in self._recent if c.marker_offset >= offset]

    def truncate(self, end_offset: int) -> None:
        """The log was cut at ``end_offset``: transactions begun at or after it never
        happened; those whose marker was cut off are ongoing again."""
        self.ongoing = {p: f for p, f in self.ongoing.items() if f < end_offset}
        kept: list[CompletedTxn] = []
        for done in self._recent:
            if done.marker_offset < end_offset:
                kept.append(done)
            elif done.first_offset < end_offset:
                self.ongoing[done.producer_id] = done.first_offset
        self._recent = kept

    def encode(self) -> list[list[int]]:
        return [[pid, first] for pid, first in sorted(self.ongoing.items())]

    @classmethod
    def decode(cls, items: list[list[int]]) -> TransactionTable:
        table = cls()
        table.ongoing = {int(pid): int(first) for pid, first in items}
        return table
