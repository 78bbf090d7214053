"""Kafka's reassignment JSON, read and written as ``kafka-reassign-partitions`` does.

A plan is ``{"version": 1, "partitions": [{"topic": T, "partition": P, "replicas": [...],
"log_dirs": [...]}]}`` (``log_dirs`` optional, "any" only: a node has one log directory);
the topics-to-move file is ``{"version": 1, "topics": [{"topic": T}]}``. ``--generate``
spreads each partition's replicas over the given brokers, keeping its replication factor:
replica j of partition p goes to broker ``(p + j) mod n`` of the brokers interleaved by rack
(as for a new topic: metadata_quorum/assignment.py), so leaders rotate over the brokers and
no two replicas of a partition share a rack while there are as many racks as replicas.
``decommission`` plans the moves that empty a broker (``rillet cluster decommission``).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from rillet.metadata_quorum.assignment import rack_alternated


class PlanError(ValueError):
    """A plan or topics file that is not Kafka's format (the message says where)."""


@dataclass(frozen=True, slots=True)
class PlannedMove:
    topic: str
    partition: int
    replicas: tuple[int, ...]


def _int_list(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise PlanError(f"{where}: expected a list of broker ids")
    return tuple(value)


def parse_plan(text: str) -> list[PlannedMove]:
    """The moves of a reassignment JSON document."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanError(f"not JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("partitions"), list):
        raise PlanError('expected {"version": 1, "partitions": [...]}')
    moves: list[PlannedMove] = []
    seen: set[tuple[str, int]] = set()
    for i, entry in enumerate(doc["partitions"]):
        where = f"partitions[{i}]"
        if not isinstance(entry, dict):
            raise PlanError(f"{where}: expected an object")
        topic, partition = entry.get("topic"), entry.get("partition")
        if not isinstance(topic, str) or not isinstance(partition, int) or partition < 0:
            raise PlanError(f"{where}: needs a topic name and a partition number")
        replicas = _int_list(entry.get("replicas"), f"{where}.replicas")
        if not replicas or len(set(replicas)) != len(replicas):
            raise PlanError(f"{where}.replicas: empty or a broker listed twice")
        dirs = entry.get("log_dirs")
        if dirs is not None and (
            not isinstance(dirs, list) or len(dirs) != len(replicas) or set(dirs) - {"any"}
        ):
            raise PlanError(f'{where}.log_dirs: only "any", one per replica, is supported')
        if (topic, partition) in seen:
            raise PlanError(f"{where}: {topic}-{partition} is listed twice")
        seen.add((topic, partition))
        moves.append(PlannedMove(topic, partition, replicas))
    return moves


def parse_topics(text: str) -> list[str]:
    """The topic names of a topics-to-move JSON document."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanError(f"not JSON: {exc}") from None
    topics = doc.get("topics") if isinstance(doc, dict) else None
    if not isinstance(topics, list) or not all(
        isinstance(t, dict) and isinstance(t.get("topic"), str) for t in topics
    ):
        raise PlanError('expected {"version": 1, "topics": [{"topic": "NAME"}, ...]}')
    return [str(t["topic"]) for t in topics]


def plan_json(moves: list[PlannedMove]) -> str:
    """The plan as Kafka's tool prints it (one line; ``log_dirs`` all "any")."""
    return json.dumps(
        {
            "version": 1,
            "partitions": [
                {
                    "topic": m.topic,
                    "partition": m.partition,
                    "replicas": list(m.replicas),
                    "log_dirs": ["any"] * len(m.replicas),
                }
                for m in sorted(moves, key=lambda m: (m.topic, m.partition))
            ],
        },
        separators=(",", ":"),
    )


def generate(
    current: list[PlannedMove], brokers: list[int], racks: dict[int, str | None] | None = None
) -> list[PlannedMove]:
    """A plan placing each partition of ``current`` on ``brokers`` (``racks``: each one's
    rack, where known), same replication factor."""
    order = rack_alternated({b: (racks or {}).get(b) for b in set(brokers)})
    out: list[PlannedMove] = []
    for m in current:
        factor = len(m.replicas)
        if factor > len(order):
            raise PlanError(
                f"{m.topic}-{m.partition} has {factor} replicas: more than the "
                f"{len(order)} brokers given"
            )
        out.append(
            PlannedMove(
                m.topic,
                m.partition,
                tuple(order[(m.partition + j) % len(order)] for j in range(factor)),
            )
        )
    return out


def decommission(current: list[PlannedMove], node: int, brokers: list[int]) -> list[PlannedMove]:
    """Moves that take every replica off ``node``: each goes to the least loaded of the other
    ``brokers`` that does not hold the partition yet (its position, and so the preferred
    leader, kept). Refused as a whole, before anything moves, when some partition cannot
    keep its replication factor on the brokers that remain."""
    others = sorted(set(brokers) - {node})
    load = Counter(r for m in current for r in m.replicas if r != node)
    moves: list[PlannedMove] = []
    for m in sorted(current, key=lambda m: (m.topic, m.partition)):
        if node not in m.replicas:
            continue
        free = [b for b in others if b not in m.replicas]
        if not free:
            raise PlanError(
                f"{m.topic}-{m.partition} has {len(m.replicas)} replicas and only "
                f"{len(others)} other live brokers remain: add a broker or lower its "
                "replication factor first"
            )
        pick = min(free, key=lambda b: (load[b], b))
        load[pick] += 1
        moves.append(
            PlannedMove(m.topic, m.partition, tuple(pick if r == node else r for r in m.replicas))
        )
    return moves
