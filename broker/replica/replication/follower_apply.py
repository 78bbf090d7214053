"""The follower fetch loop's step for one partition's answer, without the fetch.

Why a module of its own:
:class:`~rillet.broker.replica.replication.replica_fetcher.ReplicaFetcherManager`
receives answers over a connection and the replication simulation over a scheduled
network; both apply each answer with this step, so what an answer does to the follower is
decided in one place (what the loop does next: fetch_round.py). It touches no
socket or clock: the caller passes the time.
"""

from __future__ import annotations

from typing import NamedTuple

from rillet.broker.replica.replica_role import FetchApplied
from rillet.broker.replica.replication.followed_positions import SentPosition
from rillet.partition_store.errors import StoreError
from rillet.wire.errors import WireError
from rillet.wire.messages import FetchPartitionResponse


class AnswerApplied(NamedTuple):
    """What the answer did (BACK_OFF: wait before the next fetch), and the error of a
    follower append the log refused (then BACK_OFF), for the driver to report."""

    applied: FetchApplied
    refused: StoreError | WireError | None = None


def apply_answer(s: SentPosition, answer: FetchPartitionResponse, now_ms: int) -> AnswerApplied:
    """Apply ``answer`` to the replica the fetch ``s`` was sent for (the replica drops it
    as stale when ``s`` no longer holds)."""
    try:
        applied = s.replica.apply_fetch_answer(
            answer, s.fetch_offset, s.leader_epoch, now_ms, s.log_truncations
        )
    except (StoreError, WireError) as exc:
        return AnswerApplied(FetchApplied.BACK_OFF, exc)
    return AnswerApplied(applied)
