"""Replication throttles for a set of moves, set and cleared as ``kafka-reassign-partitions``
does (``--execute --throttle``, ``--verify``).

For each moving partition, the replicas it has now are throttled as leaders
(``leader.replication.throttled.replicas``) and the replicas joining as followers
(``follower.replication.throttled.replicas``); every broker taking part gets both rates.
The brokers apply a throttle only to replicas out of the ISR, so a partition's in-sync
replicas are never slowed. ``--verify`` clears them all once every move is complete, and
``rillet cluster rebalance`` and ``decommission`` clear them when their moves end.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from typing import Any

import trio

from rillet.broker.replica.replication.replication_throttle import (
    BROKER_THROTTLE_CONFIGS,
    FOLLOWER_RATE,
    FOLLOWER_REPLICAS,
    LEADER_RATE,
    LEADER_REPLICAS,
    TOPIC_THROTTLE_CONFIGS,
    replicas_text,
)
from rillet.cli.common import positive_int
from rillet.cli.move_progress import watch_moves
from rillet.cli.reassign_plan import PlannedMove
from rillet.client import Admin
from rillet.wire.broker_admin_messages import BrokerConfigChange
from rillet.wire.error_codes import ErrorCode
from rillet.wire.reassignment_messages import PartitionMove

POLL_S = 1.0


def add_throttle_arg(p: Any) -> None:
    p.add_argument(
        "--throttle",
        type=positive_int,
        metavar="BYTES_PER_S",
        help="limit the moves' replication to this many bytes/s per broker",
    )


def topic_throttles(
    current: list[PlannedMove], plan: list[PlannedMove]
) -> dict[str, dict[str, str]]:
    """Per topic, the two lists for the moves of ``plan`` (partitions that do not move are
    left out, as Kafka's tool does)."""
    now = {(c.topic, c.partition): c.replicas for c in current}
    leaders: dict[str, list[tuple[int, int]]] = defaultdict(list)
    followers: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for m in plan:
        had = now.get((m.topic, m.partition), ())
        joining = [b for b in m.replicas if b not in had]
        if not joining:
            continue
        leaders[m.topic] += [(m.partition, b) for b in had]
        followers[m.topic] += [(m.partition, b) for b in joining]
    return {
        t: {
            LEADER_REPLICAS: replicas_text(leaders[t]),
            FOLLOWER_REPLICAS: replicas_text(followers[t]),
        }
        for t in sorted(followers)
    }


def brokers_involved(current: list[PlannedMove], plan: list[PlannedMove]) -> list[int]:
    keys = {(m.topic, m.partition) for m in plan}
    had = {b for c in current if (c.topic, c.partition) in keys for b in c.replicas}
    return sorted(had | {b for m in plan for b in m.replicas})


async def set_throttles(
    admin: Admin, current: list[PlannedMove], plan: list[PlannedMove], rate_bytes_per_s: int
) -> None:
    lists = topic_throttles(current, plan)
    for topic, configs in lists.items():
        await admin.alter_topic_configs(topic, set=configs)
    rates = {LEADER_RATE: str(rate_bytes_per_s), FOLLOWER_RATE: str(rate_bytes_per_s)}
    await admin.reassignments().alter_broker_configs(
        [BrokerConfigChange(b, rates) for b in brokers_involved(current, plan)]
    )


async def clear_throttles(admin: Admin, topics: list[str]) -> tuple[list[int], list[str]]:
    """Remove both rates from every broker and both lists from ``topics``; returns what was
    cleared (brokers, topics) for the message."""
    brokers = sorted(n.node_id for n in (await admin.describe_cluster()).nodes)
    await admin.reassignments().alter_broker_configs(
        [BrokerConfigChange(b, delete=list(BROKER_THROTTLE_CONFIGS)) for b in brokers]
    )
    named = sorted(set(topics))
    for topic in named:
        await admin.alter_topic_configs(topic, delete=list(TOPIC_THROTTLE_CONFIGS))
    return brokers, named


async def run_moves(
    admin: Admin, current: list[PlannedMove], plan: list[PlannedMove], throttle: int | None
) -> list[tuple[str, int]]:
    """Start ``plan`` (throttled when ``throttle`` is set), print each refusal, print the
    progress of the others until none is moving, then remove the throttles. Returns the
    partitions refused (the caller bounds the wait with a cancel scope)."""
    if throttle is not None:
        await set_throttles(admin, current, plan, throttle)
    moves = admin.reassignments()
    outcomes = await moves.alter(
        [PartitionMove(m.topic, m.partition, list(m.replicas)) for m in plan]
    )
    refused = [(o.topic, o.partition) for o in outcomes if o.error_code != ErrorCode.NONE]
    for o in outcomes:
        if o.error_code != ErrorCode.NONE:
            name = ErrorCode.from_wire(o.error_code).name
            print(f"error: {o.topic}-{o.partition}: {name}: {o.error_message}", file=sys.stderr)
    started = [(m.topic, m.partition) for m in plan if (m.topic, m.partition) not in refused]
    await watch_moves(moves, started, POLL_S, trio.current_time)
    if throttle is not None:
        await clear_throttles(admin, sorted({m.topic for m in plan}))
    return refused
