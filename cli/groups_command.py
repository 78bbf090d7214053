"""``rillet groups list|describe|reset-offsets|delete-offsets|delete``: consumer groups for
operators.

``describe`` puts a group's members, who owns which partition, the committed offsets and the
lag (high watermark minus committed offset) in one table, like Kafka's
kafka-consumer-groups.sh. ``reset-offsets`` is refused while the group has members (a running
member would overwrite the reset with its next commit) and, as in Kafka, only shows the plan
unless ``--execute`` is given. ``delete-offsets`` removes a group's offsets of topics its
members no longer read (Kafka's OffsetDelete; refused per partition for a topic they read).
``delete`` removes empty groups and their committed offsets (refused, one line per group,
for a group with members).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any

from rillet.cli.common import (
    add_bootstrap,
    add_output,
    add_partition_option,
    chosen_partitions,
    client_options,
    error_line,
    print_json,
    print_table,
    run_async,
    timestamp_ms_arg,
)
from rillet.client import Admin, Consumer, TopicPartition
from rillet.client.errors import BrokerError, GroupIdNotFoundError, UnknownMemberIdError
from rillet.wire.group_messages import GroupDescription

DESCRIBE_HEADER = ("TOPIC", "PARTITION", "COMMITTED", "END", "LAG", "OWNER")
RESET_HEADER = ("TOPIC", "PARTITION", "COMMITTED", "NEW")


def register(sub: Any) -> None:
    groups = sub.add_parser("groups", help="list, describe consumer groups and reset offsets")
    gsub = groups.add_subparsers(dest="groups_command", required=True, metavar="ACTION")
    lst = gsub.add_parser("list", help="groups with members or committed offsets")
    lst.set_defaults(run=run_list)
    describe = gsub.add_parser("describe", help="members, assignments, offsets and lag")
    describe.add_argument("group")
    describe.set_defaults(run=run_describe)
    reset = gsub.add_parser("reset-offsets", help="move a group's committed offsets")
    reset.add_argument("group")
    target = reset.add_mutually_exclusive_group(required=True)
    target.add_argument("--to-earliest", action="store_true", help="the log start")
    target.add_argument("--to-latest", action="store_true", help="the high watermark")
    target.add_argument("--to-offset", type=int, metavar="N", help="this offset (clamped)")
    target.add_argument(
        "--to-datetime",
        type=timestamp_ms_arg,
        metavar="T",
        help="the first record at or after T (ISO 8601, no zone = UTC, or epoch ms)",
    )
    reset.add_argument(
        "--topic", action="append", default=[], help="topics to reset (default: committed)"
    )
    reset.add_argument("--execute", action="store_true", help="apply (default: show the plan)")
    reset.set_defaults(run=run_reset)
    delete_offsets = gsub.add_parser(
        "delete-offsets", help="delete a group's offsets of topics its members do not read"
    )
    delete_offsets.add_argument("group")
    delete_offsets.add_argument("--topic", required=True, help="the topic whose offsets go")
    add_partition_option(
        delete_offsets, "only this partition (repeatable; default: every partition)"
    )
    delete_offsets.set_defaults(run=run_delete_offsets)
    delete = gsub.add_parser("delete", help="delete empty groups and their committed offsets")
    delete.add_argument("groups", nargs="+", metavar="GROUP")
    delete.add_argument(
        "--if-exists", action="store_true", help="a group that does not exist is not an error"
    )
    delete.set_defaults(run=run_delete)
    for p in (lst, describe, reset, delete_offsets, delete):
        add_bootstrap(p)
    for p in (lst, describe):
        add_output(p)


def run_list(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            groups = await admin.list_groups()
        if args.output == "json":
            print_json(
                [
                    {"group": g.group_id, "members": g.members, "generation": g.generation}
                    for g in groups
                ]
            )
            return 0
        rows: list[tuple[str, ...]] = [("GROUP", "MEMBERS", "GENERATION")]
        rows += [(g.group_id, str(g.members), str(g.generation)) for g in groups]
        print_table(rows)
        return 0

    return run_async(main)


def run_delete(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            outcome = await admin.delete_groups(args.groups)
        return report_outcomes(_deletion_line(g, e, args.if_exists) for g, e in outcome.items())

    return run_async(main)


def run_delete_offsets(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            tps = await chosen_partitions(admin, args.topic, args.partitions)
            outcome = await admin.delete_group_offsets(args.group, tps)
        return report_outcomes(
            (f"deleted the offset of {tp.topic}-{tp.partition} for group {args.group}", error)
            for tp, error in sorted(outcome.items())
        )

    return run_async(main)


def _deletion_line(
    group: str, error: BrokerError | None, if_exists: bool
) -> tuple[str, BrokerError | None]:
    if isinstance(error, GroupIdNotFoundError) and if_exists:
        return f"group {group} does not exist", None
    return f"deleted group {group}", error


def report_outcomes(outcomes: Iterable[tuple[str, BrokerError | None]]) -> int:
    """One line per item: its success line on stdout, or its error on stderr; exit 1 if
    any failed."""
    failed = False
    for done, error in outcomes:
        if error is None:
            print(done)
        else:
            failed = True
            print(error_line(error), file=sys.stderr)
    return 1 if failed else 0


def run_describe(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            group = await admin.describe_group(args.group)
            committed = await admin.group_offsets(args.group)
        owner: dict[TopicPartition, str] = {}
        for m in group.members:
            for owned in m.owned:
                for p in owned.partitions:
                    owner[TopicPartition(owned.topic, p)] = m.member_id
        tps = sorted(set(committed) | set(owner))
        ends: dict[TopicPartition, int] = {}
        if tps:
            async with Consumer(args.bootstrap, **client_options(args)) as consumer:
                ends = await consumer.end_offsets(tps)
        if args.output == "json":
            print_json(describe_json(group, committed, ends, owner))
            return 0
        print(
            f"group {group.group_id}: generation {group.generation}, "
            f"assignor {group.assignor or '-'}, {len(group.members)} member(s)"
        )
        for m in group.members:
            subscription = ",".join(m.topics) + (f" /{m.pattern}/" if m.pattern else "")
            static = f" instance {m.instance_id}" if m.instance_id else ""
            print(f"  member {m.member_id[:12]} on {m.client_host or '?'}{static}: {subscription}")
        rows: list[tuple[str, ...]] = [DESCRIBE_HEADER]
        for tp in tps:
            offset = committed.get(tp, -1)
            end = ends.get(tp)
            lag = str(end - offset) if end is not None and offset >= 0 else "-"
            rows.append(
                (
                    tp.topic,
                    str(tp.partition),
                    str(offset) if offset >= 0 else "-",
                    str(end) if end is not None else "?",
                    lag,
                    owner[tp][:12] if tp in owner else "-",
                )
            )
        print_table(rows)
        return 0

    return run_async(main)


def describe_json(
    group: GroupDescription,
    committed: dict[TopicPartition, int],
    ends: dict[TopicPartition, int],
    owner: dict[TopicPartition, str],
) -> dict[str, Any]:
    """``groups describe --output json``; null where a value is unknown (no committed
    offset, an end offset not answered), full member ids."""
    partitions = []
    for tp in sorted(set(committed) | set(owner)):
        offset = committed.get(tp)
        end = ends.get(tp)
        partitions.append(
            {
                "topic": tp.topic,
                "partition": tp.partition,
                "committed": offset,
                "end_offset": end,
                "lag": end - offset if end is not None and offset is not None else None,
                "owner": owner.get(tp),
            }
        )
    return {
        "group": group.group_id,
        "generation": group.generation,
        "assignor": group.assignor or None,
        "members": [
            {
                "member_id": m.member_id,
                "instance_id": m.instance_id,
                "client_host": m.client_host or None,
                "topics": m.topics,
                "pattern": m.pattern,
                "owned": {o.topic: list(o.partitions) for o in m.owned},
            }
            for m in group.members
        ],
        "partitions": partitions,
    }


def run_reset(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            committed = await admin.group_offsets(args.group)
            topics = set(args.topic) or {tp.topic for tp in committed}
            described = await admin.describe_topics(sorted(topics)) if topics else []
            tps = [TopicPartition(t.name, p.partition) for t in described for p in t.partitions]
            if not tps:
                print(f"nothing to reset: give --topic (group {args.group} has no offsets)")
                return 2
            async with Consumer(args.bootstrap, **client_options(args)) as consumer:
                new = await _targets(args, consumer, tps)
            rows: list[tuple[str, ...]] = [RESET_HEADER]
            for tp in sorted(new):
                old = committed.get(tp, -1)
                rows.append(
                    (tp.topic, str(tp.partition), str(old) if old >= 0 else "-", str(new[tp]))
                )
            print_table(rows)
            if not args.execute:
                print("dry run: add --execute to apply")
                return 0
            try:
                await admin.set_group_offsets(args.group, new)
            except UnknownMemberIdError:
                print(f"refused: group {args.group} has active members; stop them first")
                return 1
        print(f"reset {len(new)} partition(s) of group {args.group}")
        return 0

    return run_async(main)


async def _targets(
    args: argparse.Namespace, consumer: Consumer, tps: list[TopicPartition]
) -> dict[TopicPartition, int]:
    starts = await consumer.beginning_offsets(tps)
    ends = await consumer.end_offsets(tps)
    if args.to_earliest:
        return starts
    if args.to_latest:
        return ends
    if args.to_offset is not None:
        return {tp: min(max(args.to_offset, starts[tp]), ends[tp]) for tp in tps}
    found = await consumer.offsets_for_times({tp: args.to_datetime for tp in tps})
    out = {}
    for tp in tps:
        hit = found.get(tp)
        out[tp] = hit.offset if hit is not None else ends[tp]  # nothing that late: the end
    return out
