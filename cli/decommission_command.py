"""``rillet cluster decommission NODE``: move every replica off a broker, then unregister it.

The moves are planned before any starts (reassign_plan.decommission): when the other live
brokers cannot hold some partition's replication factor, nothing moves and the command
says which partition and why. Otherwise the moves start together (throttled with
``--throttle``) and the command prints each moving replica's progress until none is still
moving. The broker then holds no replica; the command asks for it to be stopped, waits
until it has stopped and unregisters it (Kafka's UnregisterBroker), so it is no longer
listed. ``--keep-registered`` ends once the replicas have moved.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import trio

from rillet.cli.common import add_bootstrap, client_options, positive_int, run_async
from rillet.cli.move_throttles import POLL_S, add_throttle_arg, run_moves
from rillet.cli.reassign_plan import PlanError, PlannedMove, decommission
from rillet.client import Admin
from rillet.client.errors import RilletError


def register(actions: Any) -> None:
    p = actions.add_parser(
        "decommission",
        help="move every partition replica off a broker, then unregister it once stopped",
    )
    p.add_argument("node", type=positive_int, metavar="NODE", help="the broker's node id")
    p.add_argument(
        "--timeout-s", type=positive_int, default=3600, help="give up waiting after this long"
    )
    add_throttle_arg(p)
    p.add_argument(
        "--keep-registered",
        action="store_true",
        help="end once the replicas have moved (do not wait for the broker to stop)",
    )
    add_bootstrap(p)
    p.set_defaults(run=run_decommission)


def run_decommission(args: argparse.Namespace) -> int:
    return run_async(lambda: _decommission(args))


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 1


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
            return _error(f"cannot decommission broker {node}: {exc}")
        moves = admin.reassignments()
        with trio.move_on_after(args.timeout_s) as scope:
            if plan:
                print(f"moving {len(plan)} partition(s) off broker {node}")
                if await run_moves(admin, current, plan, args.throttle):
                    return 1
            print(f"broker {node} holds no replicas: it can be stopped")
            if args.keep_registered:
                return 0
            if node in [n.node_id for n in (await admin.describe_cluster()).nodes]:
                print(f"waiting for broker {node} to stop before unregistering it")
            while node in [n.node_id for n in (await admin.describe_cluster()).nodes]:
                await trio.sleep(POLL_S)
            try:
                await moves.unregister_broker(node)
            except RilletError as exc:
                return _error(f"cannot unregister broker {node}: {exc}")
            print(f"broker {node} unregistered")
            return 0
        if scope.cancelled_caught:
            return _error(f"broker {node} not decommissioned after {args.timeout_s} s")
        return 1
