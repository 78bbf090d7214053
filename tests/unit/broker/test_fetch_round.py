"""The follower fetch loop's step after each round (the fetcher and the replication
simulation both run it)."""

from __future__ import annotations

from rillet.broker.replica.replica_role import FetchApplied
from rillet.broker.replica.replication.fetch_round import (
    FetchRound,
    NextFetch,
    RoundOutcome,
    next_fetch,
)

BACKOFF_S = 0.5


def test_an_answer_naming_no_partition_is_progress() -> None:
    assert FetchRound(0).outcome is RoundOutcome.PROGRESS


def test_only_back_offs_are_errors_and_any_other_answer_is_progress() -> None:
    errors = FetchRound(2)
    errors.applied(FetchApplied.BACK_OFF)
    errors.applied(FetchApplied.BACK_OFF)
    assert errors.outcome is RoundOutcome.ERRORS
    for applied in FetchApplied:
        if applied is not FetchApplied.BACK_OFF:
            mixed = FetchRound(2)
            mixed.applied(FetchApplied.BACK_OFF)
            mixed.applied(applied)
            assert mixed.outcome is RoundOutcome.PROGRESS, applied


def test_the_loop_fetches_at_once_after_progress_and_backs_off_otherwise() -> None:
    assert next_fetch(RoundOutcome.PROGRESS, BACKOFF_S) == NextFetch(None, reconnect=False)
    assert next_fetch(RoundOutcome.ERRORS, BACKOFF_S) == NextFetch(BACKOFF_S, reconnect=False)
    assert next_fetch(RoundOutcome.BROKEN, BACKOFF_S) == NextFetch(BACKOFF_S, reconnect=True)
