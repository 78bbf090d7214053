"""The opt-in ``reassign`` fault: not in the defaults (published seeds replay the same),
drawn deterministically, and its moves keep a partition at two replicas or more."""

from __future__ import annotations

from rillet.chaos.reassign_fault import draw_target
from rillet.chaos.schedule import DEFAULT_FAULTS, build_schedule, parse_faults


def test_reassign_is_opt_in_and_drawn_from_the_seed() -> None:
    assert "reassign" not in DEFAULT_FAULTS
    assert parse_faults("all,reassign") == (*DEFAULT_FAULTS, "reassign")
    a = build_schedule(5, ("reassign", "kill-any"), 60, 3, 6)
    assert a == build_schedule(5, ("reassign", "kill-any"), 60, 3, 6)
    moves = [s for s in a.steps if s.kind == "reassign"]
    assert moves and all(s.target == "cluster" and s.partition is not None for s in moves)
    assert {type(s.params["cancel"]) for s in moves} == {bool}


def test_a_move_brings_in_a_spare_node_or_drops_one_replica_but_never_below_two() -> None:
    assert sorted(draw_target([1, 2, 3], [1, 2, 3, 4], seed=1) or []) in (
        [1, 2, 4],
        [1, 3, 4],
        [2, 3, 4],
    )
    dropped = draw_target([1, 2, 3], [1, 2, 3], seed=1)
    assert dropped is not None and len(dropped) == 2 and set(dropped) < {1, 2, 3}
    assert draw_target([1, 2], [1, 2], seed=1) is None
    assert draw_target([1, 2, 3], [1, 2, 3], seed=9) == draw_target([1, 2, 3], [1, 2, 3], seed=9)
