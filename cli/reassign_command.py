"""``rillet topics reassign``: move partition replicas with Kafka's JSON plans.

The same four steps as ``kafka-reassign-partitions``: ``--generate`` prints the current
assignment and a proposed one over ``--brokers``; ``--execute`` starts the moves of a plan
(printing the current assignment first, to keep for a rollback); ``--verify`` says for each
partition whether its move is complete, and for one in progress how many bytes each adding
replica holds against the leader's copy; ``--cancel`` returns partitions whose moves are in
progress to their original replicas. Exit status: 0 when done (``--verify``: every move
complete), 1 on a refused partition or one still moving.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rillet.cli.common import add_bootstrap, client_options, run_async
from rillet.cli.move_throttles import add_throttle_arg, clear_throttles, set_throttles
from rillet.cli.reassign_plan import (
    PlanError,
    PlannedMove,
    generate,
    parse_plan,
    parse_topics,
    plan_json,
)
from rillet.client import Admin
from rillet.client.reassignment_admin import Reassignments
from rillet.wire.error_codes import ErrorCode
from rillet.wire.reassignment_messages import PartitionMove, PartitionOutcome


def broker_list_arg(text: str) -> list[int]:
    try:
        brokers = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected broker ids like 1,2,4, got {text!r}") from None
    if not brokers:
        raise argparse.ArgumentTypeError("no broker ids given")
    return brokers


def register(tsub: Any) -> None:
    p = tsub.add_parser(
        "reassign",
        help="move partition replicas between brokers (Kafka's reassignment JSON plans)",
    )
    action = p.add_mutually_exclusive_group(required=True)
    action.add_argument("--generate", action="store_true", help="propose a plan over --brokers")
    action.add_argument("--execute", action="store_true", help="start the moves of a plan")
    action.add_argument("--verify", action="store_true", help="report the moves of a plan")
    action.add_argument("--cancel", action="store_true", help="cancel the moves of a plan")
    p.add_argument(
        "--reassignment-json-file", type=Path, help="the plan (--execute, --verify, --cancel)"
    )
    p.add_argument(
        "--topics-to-move-json-file", type=Path, help='{"topics": [{"topic": NAME}]} (--generate)'
    )
    p.add_argument("--topics", help="comma-separated topic names (--generate; or the file)")
    p.add_argument(
        "--brokers", type=broker_list_arg, help="broker ids to place replicas on (--generate)"
    )
    add_throttle_arg(p)
    p.add_argument(
        "--preserve-throttles",
        action="store_true",
        help="leave the throttles in place when every move is complete (--verify)",
    )
    add_bootstrap(p)
    p.set_defaults(run=run_reassign)


def _fail(message: str) -> int:
    print(f"rillet topics reassign: {message}", file=sys.stderr)
    return 2


def run_reassign(args: argparse.Namespace) -> int:
    try:
        if args.generate:
            if args.brokers is None:
                return _fail("--generate needs --brokers")
            if args.topics_to_move_json_file is not None:
                topics = parse_topics(args.topics_to_move_json_file.read_text())
            elif args.topics:
                topics = [t for t in args.topics.split(",") if t]
            else:
                return _fail("--generate needs --topics or --topics-to-move-json-file")
            return run_async(lambda: _generate(args, topics))
        if args.reassignment_json_file is None:
            return _fail("this action needs --reassignment-json-file")
        plan = parse_plan(args.reassignment_json_file.read_text())
    except (PlanError, OSError) as exc:
        return _fail(str(exc))
    if args.execute:
        return run_async(lambda: _execute(args, plan))
    if args.verify:
        return run_async(lambda: _verify(args, plan))
    return run_async(lambda: _cancel(args, plan))


async def _current(admin: Admin, topics: list[str]) -> list[PlannedMove]:
    return [
        PlannedMove(t.name, p.partition, tuple(p.replicas))
        for t in await admin.describe_topics(sorted(set(topics)))
        for p in t.partitions
    ]


async def _generate(args: argparse.Namespace, topics: list[str]) -> int:
    async with Admin(args.bootstrap, **client_options(args)) as admin:
        current = await _current(admin, topics)
        racks = {n.node_id: n.rack for n in (await admin.describe_cluster()).nodes}
    try:
        proposed = generate(current, args.brokers, racks)
    except PlanError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("Current partition replica assignment")
    print(plan_json(current))
    print()
    print("Proposed partition reassignment configuration")
    print(plan_json(proposed))
    return 0


def _report(outcomes: list[PartitionOutcome], verb: str) -> int:
    failed = [o for o in outcomes if o.error_code != ErrorCode.NONE]
    for o in failed:
        name = ErrorCode.from_wire(o.error_code).name
        print(f"error: {o.topic}-{o.partition}: {name}: {o.error_message or ''}", file=sys.stderr)
    done = sorted(f"{o.topic}-{o.partition}" for o in outcomes if o.error_code == ErrorCode.NONE)
    if done:
        print(f"Successfully {verb} reassignment of partitions {', '.join(done)}")
    return 1 if failed else 0


async def _execute(args: argparse.Namespace, plan: list[PlannedMove]) -> int:
    async with Admin(args.bootstrap, **client_options(args)) as admin:
        current = await _current(admin, [m.topic for m in plan])
        print("Current partition replica assignment")
        print(plan_json([c for c in current if any(_same(c, m) for m in plan)]))
        print()
        print("Save this to use as the --reassignment-json-file option during rollback")
        if args.throttle is not None:
            await set_throttles(admin, current, plan, args.throttle)
            print(
                "Warning: You must run --verify periodically, until the reassignment "
                "completes, to ensure the throttle is removed."
            )
            print(f"The inter-broker throttle limit was set to {args.throttle} B/s")
        outcomes = await admin.reassignments().alter(
            [PartitionMove(m.topic, m.partition, list(m.replicas)) for m in plan]
        )
    return _report(outcomes, "started")


async def _cancel(args: argparse.Namespace, plan: list[PlannedMove]) -> int:
    async with Admin(args.bootstrap, **client_options(args)) as admin:
        outcomes = await admin.reassignments().alter(
            [PartitionMove(m.topic, m.partition, None) for m in plan]
        )
    return _report(outcomes, "cancelled")


def _same(a: PlannedMove, b: PlannedMove) -> bool:
    return (a.topic, a.partition) == (b.topic, b.partition)


async def _verify(args: argparse.Namespace, plan: list[PlannedMove]) -> int:
    async with Admin(args.bootstrap, **client_options(args)) as admin:
        moves = admin.reassignments()
        ongoing = {(s.topic, s.partition): s for s in await moves.ongoing()}
        described = await admin.describe_topics(sorted({m.topic for m in plan}))
        current = {
            (t.name, p.partition): tuple(p.replicas) for t in described for p in t.partitions
        }
        leaders = {(t.name, p.partition): p.leader for t in described for p in t.partitions}
        unfinished = 0
        for m in plan:
            key = (m.topic, m.partition)
            status = ongoing.get(key)
            if status is not None:
                unfinished += 1
                print(f"Reassignment of partition {m.topic}-{m.partition} is still in progress.")
                await _progress(moves, m, status.adding_replicas, leaders.get(key, -1))
            elif current.get(key) == m.replicas:
                print(f"Reassignment of partition {m.topic}-{m.partition} is completed.")
            else:
                unfinished += 1
                now = list(current[key]) if key in current else "unknown"
                print(
                    f"There is no active reassignment of partition {m.topic}-{m.partition}, "
                    f"but replica set is {now} rather than {list(m.replicas)}."
                )
        if not unfinished and not args.preserve_throttles:
            brokers, topics = await clear_throttles(admin, [m.topic for m in plan])
            print(f"Clearing broker-level throttles on brokers {','.join(map(str, brokers))}")
            for topic in topics:
                print(f"Clearing topic-level throttles on topic {topic}")
    return 1 if unfinished else 0


async def _progress(moves: Reassignments, m: PlannedMove, adding: list[int], leader: int) -> None:
    """Bytes each adding replica holds, against the leader's copy."""
    total = await moves.replica_bytes(leader, m.topic, m.partition) if leader >= 0 else None
    for broker in adding:
        copied = await moves.replica_bytes(broker, m.topic, m.partition)
        have = "?" if copied is None else str(copied)
        of = "?" if total is None else str(total)
        pct = f" ({100 * copied // total}%)" if copied is not None and total else ""
        print(f"  replica on broker {broker}: {have} of {of} bytes copied{pct}")
