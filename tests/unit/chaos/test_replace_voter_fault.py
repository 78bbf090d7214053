"""The opt-in ``replace-voter`` fault: its schedule draws, when a voter change is retried,
and the check that a run ends with the intended voters (pure data, no cluster)."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest

from rillet.chaos.final_state import FinalState
from rillet.chaos.history import parse_history
from rillet.chaos.replace_voter import (
    directory_id,
    intended_voters,
    settled,
    voter_set,
)
from rillet.chaos.runner import RunConfig
from rillet.chaos.schedule import DEFAULT_FAULTS, build_schedule, minority, parse_faults
from rillet.wire.error_codes import ErrorCode

OLD, NEW, OTHER = "a" * 32, "b" * 32, "c" * 32


def test_replace_voter_is_opt_in_and_drawn_from_the_seed() -> None:
    assert "replace-voter" not in DEFAULT_FAULTS
    assert parse_faults("all,replace-voter") == (*DEFAULT_FAULTS, "replace-voter")
    kinds = ("replace-voter", "kill-leader", "reassign")
    a = build_schedule(3, kinds, 120, 3, 6)
    assert a == build_schedule(3, kinds, 120, 3, 6)
    steps = [s for s in a.steps if s.kind == "replace-voter"]
    assert steps
    assert {s.target for s in steps} <= {"raft-leader", "node"}
    assert all((s.node is not None) == (s.target == "node") for s in steps)


def test_replace_voter_takes_a_node_down_so_it_never_overlaps_a_kill_on_three_nodes() -> None:
    """Two voters are left while it runs: another node down would stop the quorum."""
    for seed in range(20):
        schedule = build_schedule(seed, ("replace-voter", "kill-leader", "pause"), 90, 3, 6)
        assert schedule.max_down == minority(3) == 1
        spans = sorted((s.start_s, s.heal_s) for s in schedule.steps)
        assert all(b[0] >= a[1] for a, b in pairwise(spans))


def test_a_change_is_retried_only_while_the_answer_says_not_now() -> None:
    assert settled(ErrorCode.NONE, ErrorCode.VOTER_NOT_FOUND)
    # An earlier attempt did it, its answer lost: the second answer says so.
    assert settled(ErrorCode.VOTER_NOT_FOUND, ErrorCode.VOTER_NOT_FOUND)
    assert settled(ErrorCode.DUPLICATE_VOTER, ErrorCode.DUPLICATE_VOTER)
    for again in ("NOT_CONTROLLER", "REQUEST_TIMED_OUT", "INVALID_REQUEST"):
        assert not settled(ErrorCode[again], ErrorCode.DUPLICATE_VOTER)
    assert settled(ErrorCode.UNKNOWN_API, ErrorCode.DUPLICATE_VOTER)  # pysyncobj: give up


def test_the_directory_id_is_read_from_the_data_directory(tmp_path: Path) -> None:
    assert directory_id(tmp_path) is None
    raft = tmp_path / "data" / "__raft" / "raft"
    raft.mkdir(parents=True)
    (raft / "directory-id").write_text(OLD + "\n")
    assert directory_id(tmp_path) == OLD


def _history(*faults: dict[str, object]) -> list[str]:
    meta = {"type": "meta", "meta": {"config": {"nodes": 3}}}
    return [json.dumps(meta), *(json.dumps(f) for f in faults)]


def _replacement(node: int, new: str | None, added: bool) -> list[dict[str, object]]:
    start = {"type": "fault", "phase": "start", "step": 0, "kind": "replace-voter", "t": 1.0}
    heal = {"type": "fault", "phase": "heal", "step": 0, "kind": "replace-voter", "t": 5.0}
    return [
        {**start, "node": node, "detail": {"old_directory": OLD, "remove": {"done": True}}},
        {**heal, "node": node, "detail": {"new_directory": new, "add": {"done": added}}},
    ]


def _final(voters: list[tuple[int, str]] | None) -> FinalState:
    return FinalState("chaos", 1, voters=voters)


def test_a_run_without_replacements_is_not_judged_on_its_voters() -> None:
    assert voter_set(parse_history(_history()), _final(None)) == []


def test_the_quorum_ends_with_every_node_and_the_replaced_one_under_its_new_directory() -> None:
    history = parse_history(_history(*_replacement(2, NEW, True)))
    assert intended_voters(history) == ({1, 2, 3}, {2: NEW})
    assert voter_set(history, _final([(1, OTHER), (2, NEW), (3, OTHER)])) == []


def test_the_old_identity_a_missing_voter_or_an_unfinished_replacement_are_caught() -> None:
    history = parse_history(_history(*_replacement(2, NEW, True)))
    (old,) = voter_set(history, _final([(1, OTHER), (2, OLD), (3, OTHER)]))
    assert old.check == "voter-set" and f"expected {NEW}" in old.message
    (missing,) = voter_set(history, _final([(1, OTHER), (3, OTHER)]))
    assert "expected [1, 2, 3]" in missing.message
    (unknown,) = voter_set(history, _final(None))
    assert "unknown" in unknown.message
    unfinished = parse_history(_history(*_replacement(2, NEW, False)))
    (v,) = voter_set(unfinished, _final([(1, OTHER), (3, OTHER)]))
    assert "replacing node 2 did not finish" in v.message


def test_the_final_voters_survive_the_final_state_file(tmp_path: Path) -> None:
    final = _final([(1, OLD), (2, NEW)])
    final.save(tmp_path)
    assert FinalState.load(tmp_path).voters == [(1, OLD), (2, NEW)]
    _final(None).save(tmp_path)
    assert FinalState.load(tmp_path).voters is None


def test_replace_voter_is_refused_with_the_pysyncobj_engine() -> None:
    with pytest.raises(ValueError, match="replace-voter needs quorum engine raft"):
        RunConfig(faults=("replace-voter",), engine="pysyncobj").check()
    RunConfig(faults=("replace-voter",)).check()
