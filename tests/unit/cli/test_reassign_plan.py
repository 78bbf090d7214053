"""Kafka's reassignment JSON as ``rillet topics reassign`` reads and writes it."""

from __future__ import annotations

import json

import pytest

from rillet.cli.reassign_plan import (
    PlanError,
    PlannedMove,
    decommission,
    generate,
    parse_plan,
    parse_topics,
    plan_json,
)


def test_a_generated_plan_round_trips_in_kafkas_format() -> None:
    current = [PlannedMove("t", 0, (1, 2, 3)), PlannedMove("t", 1, (2, 3, 1))]
    proposed = generate(current, [4, 2, 1])
    assert [m.replicas for m in proposed] == [(1, 2, 4), (2, 4, 1)]
    text = plan_json(proposed)
    assert json.loads(text)["partitions"][0] == {
        "topic": "t",
        "partition": 0,
        "replicas": [1, 2, 4],
        "log_dirs": ["any", "any", "any"],
    }
    assert parse_plan(text) == proposed
    assert parse_topics('{"version":1,"topics":[{"topic":"a"},{"topic":"b"}]}') == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "not JSON"),
        ('{"partitions": [{"topic": "t", "partition": 0, "replicas": [1, 1]}]}', "twice"),
        ('{"partitions": [{"topic": "t", "partition": 0, "replicas": ["1"]}]}', "broker ids"),
        (
            '{"partitions": [{"topic": "t", "partition": 0, "replicas": [1], "log_dirs": ["/d"]}]}',
            "any",
        ),
    ],
)
def test_bad_plans_are_refused_with_where(text: str, says: str) -> None:
    with pytest.raises(PlanError, match=says):
        parse_plan(text)


def test_generate_places_no_two_replicas_on_one_rack_when_racks_allow() -> None:
    current = [PlannedMove("t", p, (1, 2)) for p in range(6)]
    racks: dict[int, str | None] = {1: "a", 2: "a", 3: "b", 4: "b"}
    proposed = generate(current, [1, 2, 3, 4], racks)
    assert all(len({racks[b] for b in m.replicas}) == 2 for m in proposed)
    assert {m.replicas[0] for m in proposed} == {1, 2, 3, 4}  # leaders still rotate
    unracked = generate(current, [1, 2, 3, 4])
    assert unracked[0].replicas == (1, 2)  # without racks: the sorted order, as before


def test_generate_refuses_fewer_brokers_than_replicas() -> None:
    with pytest.raises(PlanError, match="more than the 2 brokers"):
        generate([PlannedMove("t", 0, (1, 2, 3))], [1, 2])


def test_decommission_moves_every_replica_off_to_the_least_loaded_broker() -> None:
    current = [
        PlannedMove("t", 0, (1, 2, 3)),
        PlannedMove("t", 1, (2, 3, 1)),
        PlannedMove("u", 0, (2, 3)),
    ]
    moves = decommission(current, 1, [1, 2, 3, 4, 5])
    assert moves == [PlannedMove("t", 0, (4, 2, 3)), PlannedMove("t", 1, (2, 3, 5))]
    with pytest.raises(PlanError, match="only 2 other live brokers remain"):
        decommission(current, 1, [1, 2, 3])
