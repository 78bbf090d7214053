"""``rillet topics create|list|describe|alter|delete-records|delete``: the admin client.

``describe`` joins two sources a Kafka operator expects to see side by side: the metadata
(leader, replicas, ISR) from the admin client and each partition's log start and end offsets
from a consumer's offset lookups. The lookups go to each partition's leader, one lookup per
leader, each bounded: a paused or overloaded leader costs its partitions their offsets ("?",
and a note naming it), never the whole answer.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import trio

from rillet.cli import reassign_command
from rillet.cli.common import (
    add_bootstrap,
    add_output,
    add_partition_option,
    chosen_partitions,
    client_options,
    key_value_arg,
    print_json,
    print_table,
    run_async,
)
from rillet.client import Admin, Consumer, NewTopic, TopicDescription, TopicPartition
from rillet.client.errors import TopicAlreadyExistsError, UnknownTopicOrPartitionError
from rillet.client.types import PartitionInfo

TABLE_HEADER = ("TOPIC", "PARTITION", "LEADER", "EPOCH", "REPLICAS", "ISR", "START", "END")
METADATA_TIMEOUT_MS = 10_000  # per node asked: a node that does not answer is left for the next
OFFSETS_TIMEOUT_S = 3.0  # per partition leader


def register(sub: Any) -> None:
    topics = sub.add_parser("topics", help="create, list, describe and delete topics")
    tsub = topics.add_subparsers(dest="topics_command", required=True, metavar="ACTION")

    create = tsub.add_parser("create", help="create a topic")
    create.add_argument("name")
    create.add_argument(
        "--partitions", type=int, default=-1, help="partition count (default: the node's)"
    )
    create.add_argument(
        "--replication-factor",
        type=int,
        default=-1,
        help="replicas per partition (default: the node's)",
    )
    create.add_argument(
        "--config",
        dest="configs",
        type=key_value_arg,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="topic config override, e.g. retention.ms=3600000 (repeatable)",
    )
    create.add_argument(
        "--if-not-exists", action="store_true", help="an existing topic is not an error"
    )
    create.set_defaults(run=run_create)

    lst = tsub.add_parser("list", help="list topic names")
    lst.set_defaults(run=run_list)

    describe = tsub.add_parser("describe", help="partitions, leaders, replicas, ISR and offsets")
    describe.add_argument("names", nargs="*", metavar="NAME", help="default: every topic")
    only = describe.add_mutually_exclusive_group()
    only.add_argument(
        "--under-replicated",
        action="store_true",
        help="only partitions whose ISR is smaller than their replica set",
    )
    only.add_argument("--unavailable", action="store_true", help="only partitions without a leader")
    describe.set_defaults(run=run_describe)

    alter = tsub.add_parser(
        "alter", help="change a topic: grow its partition count, change its configs"
    )
    alter.add_argument("name")
    alter.add_argument(
        "--partitions", type=int, help="the new partition count (only more than the topic has)"
    )
    alter.add_argument(
        "--config",
        dest="configs",
        type=key_value_arg,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a topic config, e.g. retention.ms=3600000 (repeatable); applies at once",
    )
    alter.add_argument(
        "--delete-config",
        dest="delete_configs",
        action="append",
        default=[],
        metavar="KEY",
        help="return a topic config to the nodes' default (repeatable)",
    )
    alter.set_defaults(run=run_alter)

    records = tsub.add_parser(
        "delete-records", help="delete a topic's records below an offset (Kafka's DeleteRecords)"
    )
    records.add_argument("name")
    records.add_argument(
        "--before",
        required=True,
        type=before_offset_arg,
        metavar="OFFSET|end",
        help="the first offset to keep; 'end': delete every committed record",
    )
    add_partition_option(
        records, "a partition to delete from (repeatable; default: every partition)"
    )
    records.set_defaults(run=run_delete_records)

    delete = tsub.add_parser("delete", help="delete topics")
    delete.add_argument("names", nargs="+", metavar="NAME")
    delete.add_argument(
        "--if-exists", action="store_true", help="a topic that does not exist is not an error"
    )
    delete.set_defaults(run=run_delete)
    reassign_command.register(tsub)
    for p in (create, lst, describe, alter, records, delete):
        add_bootstrap(p)
    for p in (lst, describe):
        add_output(p)


def run_create(args: argparse.Namespace) -> int:
    topic = NewTopic(args.name, args.partitions, args.replication_factor, dict(args.configs))

    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            try:
                await admin.create_topics([topic])
            except TopicAlreadyExistsError:
                if not args.if_not_exists:
                    raise
                print(f"topic {args.name} already exists")
                return 0
        print(f"created topic {args.name}")
        return 0

    return run_async(main)


def run_alter(args: argparse.Namespace) -> int:
    if args.partitions is None and not args.configs and not args.delete_configs:
        print(
            "rillet topics alter: say what to change: --partitions, --config or --delete-config",
            file=sys.stderr,
        )
        return 2

    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            if args.configs or args.delete_configs:
                await admin.alter_topic_configs(
                    args.name, dict(args.configs), list(args.delete_configs)
                )
                changes = [f"{k}={v}" for k, v in args.configs]
                changes += [f"{k} (default)" for k in args.delete_configs]
                print(f"topic {args.name} configs: {', '.join(changes)}")
            if args.partitions is not None:
                await admin.create_partitions({args.name: args.partitions})
                print(f"topic {args.name} now has {args.partitions} partitions")
        return 0

    return run_async(main)


def before_offset_arg(text: str) -> int:
    """``--before``: an offset, or ``end`` (-1, the high watermark)."""
    if text == "end":
        return -1
    try:
        offset = int(text)
    except ValueError:
        offset = -1
    if offset < 0:
        raise argparse.ArgumentTypeError(f"expected an offset >= 0 or 'end', not {text!r}")
    return offset


def run_delete_records(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            tps = await chosen_partitions(admin, args.name, args.partitions)
            before = dict.fromkeys(tps, args.before)
            low = await admin.delete_records(before)
        for tp in sorted(low):
            print(f"{tp.topic}-{tp.partition}: records below offset {low[tp]} deleted")
        return 0

    return run_async(main)


def run_list(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            names = await admin.list_topics()
        if args.output == "json":
            print_json(names)
            return 0
        for name in names:
            print(name)
        return 0

    return run_async(main)


def run_describe(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with Admin(
            args.bootstrap, request_timeout_ms=METADATA_TIMEOUT_MS, **client_options(args)
        ) as admin:
            topics = await admin.describe_topics(args.names or None)
        if args.under_replicated:
            topics = only_partitions(topics, lambda p: len(p.isr) < len(p.replicas))
        elif args.unavailable:
            topics = only_partitions(topics, lambda p: p.leader < 0)
        starts, ends, silent = await partition_offsets(args.bootstrap, topics, client_options(args))
        if args.output == "json":
            print_json(describe_json(topics, starts, ends))
        elif any(t.partitions for t in topics):
            print_table(describe_rows(topics, starts, ends))
        filtered = args.under_replicated or args.unavailable
        for t in topics if args.output == "text" and not filtered else ():
            if t.configs:
                configs = ", ".join(f"{k}={v}" for k, v in sorted(t.configs.items()))
                print(f"{t.name} configs: {configs}")
        if silent:
            print(
                f"note: offsets unknown (?) where the leader did not answer within "
                f"{OFFSETS_TIMEOUT_S:g}s: node(s) {', '.join(map(str, silent))}",
                file=sys.stderr,
            )
        return 0

    return run_async(main)


async def partition_offsets(
    bootstrap: str,
    topics: Sequence[TopicDescription],
    options: dict[str, Any] | None = None,
    timeout_s: float = OFFSETS_TIMEOUT_S,
) -> tuple[dict[TopicPartition, int], dict[TopicPartition, int], list[int]]:
    """Log start and end offsets per partition, and the leaders that did not answer in time.

    One lookup per leader, all at once, each with its own client and deadline: a leader
    that is paused holds up only its own partitions.
    """
    by_leader: dict[int, list[TopicPartition]] = defaultdict(list)
    for t in topics:
        for p in t.partitions:
            if p.leader >= 0:
                by_leader[p.leader].append(TopicPartition(t.name, p.partition))
    starts: dict[TopicPartition, int] = {}
    ends: dict[TopicPartition, int] = {}
    silent: list[int] = []

    async def lookup(leader: int, tps: list[TopicPartition]) -> None:
        with trio.move_on_after(timeout_s):
            async with Consumer(bootstrap, **(options or {})) as consumer:
                first = await consumer.beginning_offsets(tps)
                last = await consumer.end_offsets(tps)
            starts.update(first)
            ends.update(last)
            return
        silent.append(leader)

    async with trio.open_nursery() as nursery:
        for leader, tps in sorted(by_leader.items()):
            nursery.start_soon(lookup, leader, tps)
    return starts, ends, sorted(silent)


def only_partitions(
    topics: Sequence[TopicDescription], keep: Callable[[PartitionInfo], bool]
) -> list[TopicDescription]:
    """The topics with only the partitions ``keep`` accepts; topics left empty are dropped."""
    out = []
    for t in topics:
        kept = [p for p in t.partitions if keep(p)]
        if kept:
            out.append(TopicDescription(t.name, kept, t.configs))
    return out


def describe_json(
    topics: Sequence[TopicDescription],
    starts: dict[TopicPartition, int],
    ends: dict[TopicPartition, int],
) -> list[dict[str, Any]]:
    """``describe --output json``: one object per topic; an unknown offset is null and a
    partition without a leader has leader -1."""
    return [
        {
            "name": t.name,
            "configs": dict(sorted(t.configs.items())),
            "partitions": [
                {
                    "partition": p.partition,
                    "leader": p.leader,
                    "leader_epoch": p.leader_epoch,
                    "replicas": p.replicas,
                    "isr": p.isr,
                    "log_start_offset": starts.get(TopicPartition(t.name, p.partition)),
                    "end_offset": ends.get(TopicPartition(t.name, p.partition)),
                }
                for p in t.partitions
            ],
        }
        for t in topics
    ]


def describe_rows(
    topics: Sequence[TopicDescription],
    starts: dict[TopicPartition, int],
    ends: dict[TopicPartition, int],
) -> list[tuple[str, ...]]:
    """The describe table, header first; "?" where an offset is unknown, "-" for no leader."""
    rows: list[tuple[str, ...]] = [TABLE_HEADER]
    for t in topics:
        for p in t.partitions:
            tp = TopicPartition(t.name, p.partition)
            rows.append(
                (
                    t.name,
                    str(p.partition),
                    str(p.leader) if p.leader >= 0 else "-",
                    str(p.leader_epoch),
                    ",".join(map(str, p.replicas)),
                    ",".join(map(str, p.isr)),
                    str(starts.get(tp, "?")),
                    str(ends.get(tp, "?")),
                )
            )
    return rows


def run_delete(args: argparse.Namespace) -> int:
    async def main() -> int:
        names: list[str] = list(dict.fromkeys(args.names))
        async with Admin(args.bootstrap, **client_options(args)) as admin:
            if args.if_exists:
                existing = set(await admin.list_topics())
                missing = [n for n in names if n not in existing]
                names = [n for n in names if n in existing]
                for name in missing:
                    print(f"topic {name} does not exist")
            try:
                if names:
                    await admin.delete_topics(names)
            except UnknownTopicOrPartitionError:
                if not args.if_exists:
                    raise  # deleted meanwhile by someone else: fine with --if-exists
        if names:
            print("deleted " + ", ".join(names))
        return 0

    return run_async(main)
