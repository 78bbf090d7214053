"""The segments of one partition's log in offset order, the last one active.

Why a class of its own (Kafka keeps its LogSegments apart from the log too): reads,
truncations, retention, cleaning and scrubbing all find a segment by offset and replace
runs of segments; the list and its parallel list of base offsets (what ``bisect`` searches)
must change together, so only this class changes them. It decides nothing about what to
keep: the log decides, and hands what it takes out to its deferred deletions.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from pathlib import Path

from rillet.partition_store.segment import LogSegment


class LogSegments:
    """Never empty: a log always has its active segment."""

    def __init__(self, segments: list[LogSegment]) -> None:
        if not segments:
            raise ValueError("a log has at least its active segment")
        self._segments = list(segments)
        self._bases = [s.base_offset for s in segments]

    def __iter__(self) -> Iterator[LogSegment]:
        return iter(self._segments)

    def __reversed__(self) -> Iterator[LogSegment]:
        return reversed(self._segments)

    def __len__(self) -> int:
        return len(self._segments)

    def as_list(self) -> list[LogSegment]:
        """A copy, in offset order."""
        return list(self._segments)

    @property
    def first(self) -> LogSegment:
        return self._segments[0]

    @property
    def active(self) -> LogSegment:
        return self._segments[-1]

    def sealed(self) -> list[LogSegment]:
        """Every segment but the active one."""
        return self._segments[:-1]

    # -- finding ------------------------------------------------------------------------

    def at(self, index: int) -> LogSegment:
        return self._segments[index]

    def index_holding(self, offset: int) -> int:
        """Index of the segment whose range holds ``offset`` (the last one starting at or
        below it; -1 when ``offset`` is below the first base)."""
        return bisect.bisect_right(self._bases, offset) - 1

    def holding(self, offset: int) -> LogSegment:
        """The segment holding ``offset`` (the first one for offsets below its base)."""
        return self._segments[max(self.index_holding(offset), 0)]

    def from_holding(self, offset: int) -> list[LogSegment]:
        """The segment holding ``offset`` and every later one."""
        return self._segments[max(self.index_holding(offset), 0) :]

    def at_base(self, base_offset: int) -> LogSegment | None:
        i = self.index_holding(base_offset)
        return self._segments[i] if i >= 0 and self._bases[i] == base_offset else None

    def index_of_path(self, log_path: Path) -> int | None:
        return next((k for k, s in enumerate(self._segments) if s.paths.log == log_path), None)

    def run_from(self, base_offset: int, count: int) -> tuple[int, list[LogSegment]]:
        """(index, the ``count`` segments from the first whose base is at or above
        ``base_offset``), for a cleaned segment that replaces them."""
        i = bisect.bisect_left(self._bases, base_offset)
        return i, self._segments[i : i + count]

    # -- changing (each returns the segments taken out) -----------------------------------

    def roll(self, segment: LogSegment) -> None:
        """Append a new active segment (it starts at the log end)."""
        self._segments.append(segment)
        self._bases.append(segment.base_offset)

    def cut_after(self, index: int) -> list[LogSegment]:
        """Take out every segment after ``index``."""
        gone = self._segments[index + 1 :]
        del self._segments[index + 1 :]
        del self._bases[index + 1 :]
        return gone

    def drop_first(self, count: int) -> list[LogSegment]:
        """Take out the first ``count`` segments (retention; never the active one)."""
        count = min(count, len(self._segments) - 1)
        gone = self._segments[:count]
        del self._segments[:count]
        del self._bases[:count]
        return gone

    def reset(self, segment: LogSegment) -> None:
        """``segment`` is the whole log from now on (the caller retired the others first:
        the new one may reuse their file names)."""
        self._segments, self._bases = [segment], [segment.base_offset]

    def replace(self, index: int, count: int, segment: LogSegment) -> None:
        """Put ``segment`` in place of the ``count`` segments from ``index``."""
        self._segments[index : index + count] = [segment]
        self._bases[index : index + count] = [segment.base_offset]
