"""The ``reassign`` fault: a partition move started during the other faults.

At the step's start the nemesis moves one partition of the chaos topic: a replica is
replaced by a node that holds none (when the cluster has one), else dropped (replication
factor one less, never below two); which replica and which node come from the step's seed.
At the heal it cancels the move when the step says so and it is still in progress, and
otherwise moves the partition back to its original replicas (a new move replacing one in
progress), so the run ends with the topic as it began. Every call is bounded and answers
instead of raising: a refusal is recorded in the fault's detail, as the checker reads the
history only for what clients saw.
"""

from __future__ import annotations

import random
from typing import Any

import trio

from rillet.client import Admin
from rillet.client.errors import RilletError
from rillet.wire.error_codes import ErrorCode
from rillet.wire.reassignment_messages import PartitionMove

CALL_TIMEOUT_S = 10.0


def draw_target(replicas: list[int], nodes: list[int], seed: int) -> list[int] | None:
    """The replica list to move to (None: nothing can move)."""
    rng = random.Random(seed)
    spare = [n for n in sorted(nodes) if n not in replicas]
    leaving = rng.randrange(len(replicas)) if replicas else 0
    if spare:
        joining = rng.choice(spare)
        return [joining if i == leaving else b for i, b in enumerate(replicas)]
    if len(replicas) > 2:
        return [b for i, b in enumerate(replicas) if i != leaving]
    return None


async def _replicas(admin: Admin, topic: str, partition: int) -> list[int] | None:
    for t in await admin.describe_topics([topic]):
        for p in t.partitions:
            if p.partition == partition:
                return list(p.replicas)
    return None


async def _move(admin: Admin, topic: str, partition: int, to: list[int] | None) -> str:
    outcomes = await admin.reassignments().alter([PartitionMove(topic, partition, to)])
    return ErrorCode.from_wire(outcomes[0].error_code).name if outcomes else "NO_ANSWER"


async def _start(
    bootstrap: str, topic: str, partition: int, nodes: list[int], seed: int
) -> dict[str, Any]:
    with trio.move_on_after(CALL_TIMEOUT_S):
        async with Admin(bootstrap, request_timeout_ms=3_000) as admin:
            replicas = await _replicas(admin, topic, partition)
            if replicas is None:
                return {"partition": partition, "error": "partition not found"}
            target = draw_target(replicas, nodes, seed)
            if target is None:
                return {"partition": partition, "from": replicas, "error": "nothing to move"}
            result = await _move(admin, topic, partition, target)
            return {"partition": partition, "from": replicas, "to": target, "result": result}
    return {"partition": partition, "error": "timed out"}


async def _heal(
    bootstrap: str, topic: str, partition: int, original: list[int], cancel: bool
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with trio.move_on_after(CALL_TIMEOUT_S):
        async with Admin(bootstrap, request_timeout_ms=3_000) as admin:
            if cancel:
                out["cancel"] = await _move(admin, topic, partition, None)
                if out["cancel"] == "NONE":
                    return out
            out["back"] = await _move(admin, topic, partition, original)
            return out
    return {**out, "error": "timed out"}


def start_move(bootstrap: str, topic: str, partition: int, nodes: list[int], seed: int) -> Any:
    try:
        return trio.run(_start, bootstrap, topic, partition, nodes, seed)
    except RilletError as exc:
        return {"partition": partition, "error": str(exc)[:200]}


def end_move(bootstrap: str, topic: str, detail: dict[str, Any], cancel: bool) -> Any:
    original = detail.get("from")
    if "to" not in detail or not isinstance(original, list):
        return {}  # nothing was started
    try:
        return trio.run(_heal, bootstrap, topic, int(detail["partition"]), original, cancel)
    except RilletError as exc:
        return {"error": str(exc)[:200]}
