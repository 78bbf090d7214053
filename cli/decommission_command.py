"""``rillet cluster decommission NODE``: move every replica off a broker, and wait.

The moves are planned before any starts (reassign_plan.decommission): when the other live
brokers cannot hold some partition's replication factor, nothing moves and the command
says which partition and why. Otherwise the moves start together and the command waits,
printing how many partitions are done, until none is still moving. The broker then holds
no replica and can be stopped; it stays registered (fenced once stopped), since
UnregisterBroker is not built yet.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import trio

from rillet.cli.common import add_bootstrap, client_options, positive_int, run_async
from rillet.cli.reassign_plan import PlanError, PlannedMove, decommission
from rillet.client import Admin
from rillet.wire.error_codes import ErrorCode
from rillet.wire.reassignment_messages import PartitionMove

POLL_S = 1.0


def register(actions: Any) -> None:
    p = actions.add_parser(
        "decommission", help="move every partition replica off a broker (before retiring it)"
    )
    p.add_argument("node", type=positive_int, metavar="NODE", help="the broker's node id")
    p.add_argument(
        "--timeout-s", type=positive_int, default=3600, help="give up waiting after this long"
    )
    add_bootstrap(p)
    p.set_defaults(run=run_decommission)


def run_decommission(args: argparse.Namespace) -> int:
    return run_async(lambda: _decommission(args))


async def _decommission(args: argparse.Namespace) -> int:
    node = int(args.node)
    async with Admin(args.bootstrap, **client_options(args)) as admin:
        brokers = [n.node_id for n in (await admin.describe_cluster()).nodes]
        current = [
            PlannedMove(t.name, p.partition, tuple(p.replicas))
            for t in await admin.describe_topics()
            for p in t.partitions
        ]
        try:
            plan = decommission(current, node, brokers)
        except PlanError as exc:
            print(f"error: cannot decommission broker {node}: {exc}", file=sys.stderr)
            return 1
        if not plan:
            print(f"broker {node} holds no replicas")
            return 0
        moves = admin.reassignments()
        outcomes = await moves.alter(
            [PartitionMove(m.topic, m.partition, list(m.replicas)) for m in plan]
        )
        refused = [o for o in outcomes if o.error_code != ErrorCode.NONE]
        for o in refused:
            name = ErrorCode.from_wire(o.error_code).name
            print(f"error: {o.topic}-{o.partition}: {name}: {o.error_message}", file=sys.stderr)
        if refused:
            return 1
        print(f"moving {len(plan)} partition(s) off broker {node}")
        keys = [(m.topic, m.partition) for m in plan]
        with trio.move_on_after(args.timeout_s):
            while True:
                moving = len(await moves.ongoing(keys))
                print(f"{len(plan) - moving} of {len(plan)} partition(s) moved")
                if not moving:
                    print(f"broker {node} holds no replicas: it can be stopped")
                    return 0
                await trio.sleep(POLL_S)
        print(f"error: moves still in progress after {args.timeout_s} s", file=sys.stderr)
        return 1
