"""Segments that left the log but whose files must outlive it for a while.

The broker sends fetched ranges with ``sendfile`` from a segment's descriptor, possibly after
the event loop has moved on. Closing that descriptor at once would break the transfer, or
worse, let the number be reused by another file mid-send. So a segment leaving the log
(retention, truncation) is renamed to ``*.deleted`` at once — a restart then removes it, and
it no longer counts as part of the log — and is closed and unlinked only once
``file_delete_delay_ms`` has passed, as Kafka does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rillet.partition_store.segment import LogSegment
from rillet.wire import disk_io


@dataclass(slots=True)
class _Pending:
    segment: LogSegment
    paths: list[Path]
    due_ms: int


class DeferredDeletions:
    """A queue of renamed segments; time comes in as arguments, never from a clock."""

    def __init__(self) -> None:
        self._pending: list[_Pending] = []

    def __len__(self) -> int:
        return len(self._pending)

    def schedule(self, segment: LogSegment, due_ms: int) -> None:
        """Rename the segment's files to ``*.deleted`` now; close and unlink at ``due_ms``."""
        self._pending.append(_Pending(segment, segment.rename_for_deletion(), due_ms))

    def purge(self, now_ms: int) -> int:
        """Close and unlink every segment whose delay has passed; returns how many."""
        due = [p for p in self._pending if p.due_ms <= now_ms]
        if due:
            self._pending = [p for p in self._pending if p.due_ms > now_ms]
            for pending in due:
                _finish(pending)
        return len(due)

    def purge_all(self) -> None:
        """Finish every pending deletion now (close: no read can be in flight any more)."""
        pending, self._pending = self._pending, []
        for p in pending:
            _finish(p)


def _finish(pending: _Pending) -> None:
    pending.segment.close()
    for path in pending.paths:
        disk_io.unlink_missing_ok(path)
