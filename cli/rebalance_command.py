"""``rillet cluster rebalance``: even out replicas, bytes and leaders over the live brokers.

It reads every partition's replicas and each broker's replica sizes, asks the planner
(metadata_quorum/rebalance_planner.py) for the moves, prints the plan with the load per
broker before and after, and unless ``--dry-run`` starts the moves (throttled with
``--throttle``), prints each moving replica's progress with an ETA until none is left,
removes the throttles, moves leaders to the new preferred replicas, and reports what it
did. A cluster already even is left alone (exit 0, "nothing to move").
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

import trio

from rillet.cli.common import add_bootstrap, client_options, positive_int, run_async
from rillet.cli.move_throttles import add_throttle_arg, run_moves
from rillet.cli.reassign_plan import PlannedMove, plan_json
from rillet.client import Admin
from rillet.metadata_quorum.rebalance_planner import PartitionLoad, plan_rebalance
from rillet.wire.error_codes import ErrorCode

PREFERRED = 0  # ElectLeaders' election type


def register(actions: Any) -> None:
    p = actions.add_parser(
        "rebalance", help="move replicas so brokers hold even replicas, bytes and leaders"
    )
    p.add_argument("--dry-run", action="store_true", help="print the plan, move nothing")
    add_throttle_arg(p)
    p.add_argument(
        "--max-moves", type=positive_int, default=1000, help="at most this many replica copies"
    )
    p.add_argument(
        "--timeout-s", type=positive_int, default=3600, help="give up waiting after this long"
    )
    add_bootstrap(p)
    p.set_defaults(run=run_rebalance)


def run_rebalance(args: argparse.Namespace) -> int:
    return run_async(lambda: _rebalance(args))


def load_table(brokers: list[int], parts: list[PartitionLoad]) -> list[str]:
    """One line per broker: replicas, bytes and preferred leaders."""
    replicas = Counter(b for p in parts for b in p.replicas)
    size = Counter({b: sum(p.size_bytes for p in parts if b in p.replicas) for b in brokers})
    leaders = Counter(p.replicas[0] for p in parts if p.replicas)
    return [
        f"  broker {b}: {replicas[b]} replicas, {size[b]} bytes, {leaders[b]} leaders"
        for b in brokers
    ]


async def _rebalance(args: argparse.Namespace) -> int:
    async with Admin(args.bootstrap, **client_options(args)) as admin:
        nodes = (await admin.describe_cluster()).nodes
        racks = {n.node_id: n.rack for n in nodes}
        moves = admin.reassignments()
        sizes: dict[tuple[str, int], int] = {}
        for b in sorted(racks):
            for key, n in ((await moves.hosted_bytes(b)) or {}).items():
                sizes[key] = max(sizes.get(key, 0), n)
        parts = [
            PartitionLoad(
                t.name, p.partition, tuple(p.replicas), sizes.get((t.name, p.partition), 0)
            )
            for t in await admin.describe_topics()
            for p in t.partitions
        ]
        plan = plan_rebalance(racks, parts, args.max_moves)
        after = {(m.topic, m.partition): m for m in plan.moves}
        print("Load before:")
        print("\n".join(load_table(sorted(racks), parts)))
        if not plan.moves:
            print("nothing to move: the brokers are even")
            return 0
        print(f"Plan: {len(plan.moves)} partition(s), {plan.copies} replica copies")
        print(plan_json([PlannedMove(m.topic, m.partition, m.replicas) for m in plan.moves]))
        print("Load after:")
        print(
            "\n".join(
                load_table(sorted(racks), [after.get((p.topic, p.partition), p) for p in parts])
            )
        )
        if args.dry_run:
            return 0
        return await _execute(args, admin, parts, plan.moves)


async def _execute(
    args: argparse.Namespace, admin: Admin, parts: list[PartitionLoad], plan: list[PartitionLoad]
) -> int:
    moves = admin.reassignments()
    current = [PlannedMove(p.topic, p.partition, p.replicas) for p in parts]
    planned = [PlannedMove(m.topic, m.partition, m.replicas) for m in plan]
    with trio.move_on_after(args.timeout_s):
        refused = await run_moves(admin, current, planned, args.throttle)
        started = [(m.topic, m.partition) for m in plan if (m.topic, m.partition) not in refused]
        elected = await moves.elect_leaders(PREFERRED, started)
        led = sum(
            1 for o in elected if o.error_code in (ErrorCode.NONE, ErrorCode.ELECTION_NOT_NEEDED)
        )
        print(
            f"rebalanced: {len(started)} partition(s) moved, {led} led by their preferred "
            f"replica, {len(refused)} refused"
        )
        return 1 if refused else 0
    print(f"error: moves still in progress after {args.timeout_s} s", file=sys.stderr)
    return 1
