"""Where the last few batches of a segment start: reads at the log end without a file read.

Followers and tailing consumers fetch from the log end, so nearly every read asks for a
batch that was appended moments ago. Found through the sparse offset index, that batch costs
a ``pread`` of the headers after the nearest index entry and a header parse, once per
partition of every fetch: at 1,000 partitions, a few percent of a node's CPU. The segment
remembers the offsets and positions of the batches it appended last instead; a read that
starts among them finds its batch here. Anything older goes through the index as before.

Only appended batches are remembered (they were validated before they were written), and a
cut forgets them all: the entries never describe bytes that are not in the file.
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple

# How many appended batches a segment remembers: a follower or consumer a few appends
# behind still finds its batch; more would only make the miss path walk further.
RECENT_BATCHES = 16


class RecentBatch(NamedTuple):
    base_offset: int
    next_offset: int
    position: int  # of the batch in the segment's file


class RecentBatches:
    """The segment's last appended batches, oldest first (at most :data:`RECENT_BATCHES`)."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: deque[RecentBatch] = deque(maxlen=RECENT_BATCHES)

    def appended(self, base_offset: int, next_offset: int, position: int) -> None:
        self._entries.append(RecentBatch(base_offset, next_offset, position))

    def forget(self) -> None:
        """The file was cut or rebuilt: no entry may be trusted any more."""
        self._entries.clear()

    def find(self, offset: int) -> RecentBatch | None:
        """The remembered batch holding ``offset``; None when it is older than all of them
        or past the last one (the caller looks it up in the file)."""
        for entry in reversed(self._entries):
            if entry.base_offset <= offset:
                return entry if offset < entry.next_offset else None
        return None

    def __len__(self) -> int:
        return len(self._entries)
