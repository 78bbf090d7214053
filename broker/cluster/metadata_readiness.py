"""Whether this node's metadata is fresh enough to answer a client (sans-I/O).

A node that starts holds only what its own disk had: a voter applies its Raft log only as far
as a leader tells it the log is committed, and a broker-only node starts from nothing. Answered
in that window, a client that knew a topic of 6 partitions would hear of 0 (or of no topic at
all) and fail every record queued for it. So a node answers metadata only once:

- it has learned, from the quorum, an offset the metadata log had committed after it started
  (the index of its own broker registration: a record the controller commits in its current
  term, so every entry committed before it, by any earlier leader, comes before it), and
- it has applied the log up to that offset.

From then on it never answers with an older state than an answer it already gave (a client
that saw offset N must not be shown N-1 by the same node). The node feeds this gate what it
learns and applies; handlers ask it before answering.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class NotReady:
    """Why the node may not answer yet (one line, for the client and the log)."""

    reason: str


class MetadataReadiness:
    def __init__(self) -> None:
        self._start_up_offset: int | None = None  # learned from the quorum after start
        self._caught_up = False
        self._answered_offset = -1  # the newest state an answer was given from

    @property
    def start_up_offset(self) -> int | None:
        """The committed offset learned after start, or None while none is known."""
        return self._start_up_offset

    @property
    def answered_offset(self) -> int:
        """The metadata offset of the newest answer given (-1: none yet)."""
        return self._answered_offset

    def learn_committed(self, offset: int) -> None:
        """The quorum says the metadata log had committed ``offset`` after this node
        started. Only the first catch-up counts: once caught up, a later registration (after
        a stale epoch, say) does not close the node to clients again."""
        if self._caught_up:
            return
        if self._start_up_offset is None or offset > self._start_up_offset:
            self._start_up_offset = offset

    def caught_up(self, applied_offset: int) -> bool:
        """Whether the node has applied the log as far as the quorum had committed it after
        start; stays true once it was."""
        if not self._caught_up:
            target = self._start_up_offset
            self._caught_up = target is not None and applied_offset >= target
        return self._caught_up

    def check(self, applied_offset: int) -> NotReady | None:
        """None when an answer from the state at ``applied_offset`` may be given now, else
        why not."""
        if not self.caught_up(applied_offset):
            target = self._start_up_offset
            if target is None:
                return NotReady("metadata not caught up: no committed offset learned yet")
            return NotReady(f"metadata not caught up: applied offset {applied_offset} of {target}")
        if applied_offset < self._answered_offset:
            return NotReady(
                f"metadata offset {applied_offset} is older than the "
                f"{self._answered_offset} already answered"
            )
        return None

    def answered(self, offset: int) -> None:
        """An answer from the state at ``offset`` was given."""
        self._answered_offset = max(self._answered_offset, offset)
