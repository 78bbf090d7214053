"""StaggeredRace: which candidate node to try next, and when (no I/O, times as numbers)."""

from __future__ import annotations

import pytest

from rillet.client.staggered_race import StaggeredRace


def test_the_next_candidate_starts_only_after_the_stagger() -> None:
    race = StaggeredRace(["a", "b", "c"], 0.25, now_s=10.0)
    assert race.due(10.0) == [(0, "a")]
    assert race.due(10.0) == [] and race.next_start_s == 10.25
    assert race.due(10.2) == []
    assert race.due(10.25) == [(1, "b")]
    assert race.next_start_s == 10.5 and race.running == 2


def test_a_failure_starts_the_next_candidate_at_once() -> None:
    race = StaggeredRace(["a", "b", "c"], 0.25, now_s=0.0)
    race.due(0.0)
    race.failed(0, 0.01)
    assert race.next_start_s == 0.01
    assert race.due(0.01) == [(1, "b")]
    race.due(0.26)  # "c" joins "b" after the stagger
    race.failed(1, 0.3)
    assert race.due(0.3) == []  # every candidate has started: nothing more to start
    assert not race.finished and race.next_start_s is None


def test_the_first_success_wins_and_nothing_more_starts() -> None:
    race = StaggeredRace(["a", "b", "c"], 0.25, now_s=0.0)
    race.due(0.0)
    race.due(0.25)
    assert race.succeeded(1)
    assert race.finished and race.winner == "b"
    assert not race.succeeded(0)  # a late success loses: its result is given up
    assert race.winner == "b"
    assert race.due(5.0) == [] and race.next_start_s is None


def test_the_race_ends_when_every_candidate_failed() -> None:
    race = StaggeredRace(["a", "b"], 0.25, now_s=0.0)
    for now_s in (0.0, 0.1):
        ((attempt, _),) = race.due(now_s)
        race.failed(attempt, now_s)
    assert race.finished and race.winner is None


def test_no_candidates_is_a_finished_race_without_a_winner() -> None:
    race: StaggeredRace[str] = StaggeredRace([], 0.25, now_s=0.0)
    assert race.due(0.0) == [] and race.finished and race.winner is None


def test_a_negative_stagger_is_refused() -> None:
    with pytest.raises(ValueError, match="stagger_s"):
        StaggeredRace(["a"], -1.0, now_s=0.0)
