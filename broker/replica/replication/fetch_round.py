"""What one round trip of a follower's fetch loop came to, and what the loop does next.

Why a core of its own: the follower fetcher
(:class:`~rillet.broker.replica.replication.replica_fetcher.ReplicaFetcherManager`) runs
its loops over connections, the replication simulation (tests) over a scheduled network;
both end every round with this step, so whether a follower fetches again at once, backs
off, or also replaces its connection is decided in one place. It touches no socket or
clock.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from rillet.broker.replica.replica_role import FetchApplied


class RoundOutcome(enum.Enum):
    """PROGRESS: fetch again at once; ERRORS: only error answers (back off, fetch again on
    the same connection); BROKEN: the connection broke or the fetch went unanswered."""

    PROGRESS = "progress"
    ERRORS = "errors"
    BROKEN = "broken"


class NextFetch(NamedTuple):
    """After a round: wait ``wait_s`` first (None: fetch again at once; on a node a change
    of roles ends the wait early), and drop the connection first when ``reconnect``."""

    wait_s: float | None
    reconnect: bool


class FetchRound:
    """One round's answers, applied one partition at a time."""

    def __init__(self, partitions_answered: int) -> None:
        # An answer naming no partition means nothing new: fetch again at once.
        self._progressed = partitions_answered == 0

    def applied(self, applied: FetchApplied) -> None:
        """A partition's answer was applied (or dropped as stale): anything but a back-off
        is progress."""
        if applied is not FetchApplied.BACK_OFF:
            self._progressed = True

    @property
    def outcome(self) -> RoundOutcome:
        return RoundOutcome.PROGRESS if self._progressed else RoundOutcome.ERRORS


def next_fetch(outcome: RoundOutcome, backoff_s: float) -> NextFetch:
    """What the loop does after a round that came to ``outcome``."""
    if outcome is RoundOutcome.PROGRESS:
        return NextFetch(None, reconnect=False)
    return NextFetch(backoff_s, reconnect=outcome is RoundOutcome.BROKEN)
