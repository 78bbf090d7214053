"""The clock a leader's fetch session keeps for the partitions that went quiet in it.

A follower caught up on a partition stays caught up for as long as its leader's replica
has no news (nothing appended, so the log end has not moved past it). A leader that reads
a quiet partition only when it has news needs another way to know the follower is still
there: the session's rounds. Each fetch the follower sends starts a round; the latest
round's time is when every still-quiet partition's follower was last known caught up.
The replica's ISR check reads that time (replication.leader_state), one shared object per
session, instead of having every quiet partition read again to refresh it.
"""

from __future__ import annotations


class SessionRounds:
    """When a leader's fetch session last looked at its partitions (its latest read round,
    -1 before the first). It stops moving when the follower stops fetching."""

    __slots__ = ("last_ms",)

    def __init__(self) -> None:
        self.last_ms = -1
