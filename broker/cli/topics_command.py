"""``rillet topics create|list|describe|delete``."""

from __future__ import annotations

import argparse
from typing import Any

from rillet.broker.cli.common import add_bootstrap, run_async
from rillet.client import Admin, Consumer, NewTopic, TopicPartition


def register(sub: Any) -> None:
    topics = sub.add_parser("topics", help="create, list, describe and delete topics")
    tsub = topics.add_subparsers(dest="topics_command", required=True, metavar="ACTION")

    create = tsub.add_parser("create", help="create a topic")
    create.add_argument("name")
    create.add_argument("--partitions", type=int, default=-1, help="default: the node's")
    create.add_argument("--replication-factor", type=int, default=-1)
    create.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="topic config override, e.g. retention.ms=3600000 (repeatable)",
    )
    create.set_defaults(run=run_create)

    lst = tsub.add_parser("list", help="list topic names")
    lst.set_defaults(run=run_list)

    describe = tsub.add_parser("describe", help="partitions, leaders, replicas and offsets")
    describe.add_argument("names", nargs="*")
    describe.set_defaults(run=run_describe)

    delete = tsub.add_parser("delete", help="delete topics")
    delete.add_argument("names", nargs="+")
    delete.set_defaults(run=run_delete)
    for p in (create, lst, describe, delete):
        add_bootstrap(p)


def parse_configs(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"error: --config expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def run_create(args: argparse.Namespace) -> int:
    configs = parse_configs(args.config)

    async def main() -> int:
        async with Admin(args.bootstrap) as admin:
            await admin.create_topics(
                [NewTopic(args.name, args.partitions, args.replication_factor, configs)]
            )
        print(f"created topic {args.name}")
        return 0

    return run_async(main)


def run_list(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with Admin(args.bootstrap) as admin:
            for name in await admin.list_topics():
                print(name)
        return 0

    return run_async(main)


def run_describe(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with Admin(args.bootstrap) as admin:
            topics = await admin.describe_topics(args.names or None)
        tps = [TopicPartition(t.name, p.partition) for t in topics for p in t.partitions]
        async with Consumer(args.bootstrap) as consumer:
            starts = await consumer.beginning_offsets(tps) if tps else {}
            ends = await consumer.end_offsets(tps) if tps else {}
        rows: list[tuple[str, ...]] = [
            ("TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR", "START", "END")
        ]
        for t in topics:
            for p in t.partitions:
                tp = TopicPartition(t.name, p.partition)
                rows.append(
                    (
                        t.name,
                        str(p.partition),
                        str(p.leader),
                        ",".join(map(str, p.replicas)),
                        ",".join(map(str, p.isr)),
                        str(starts.get(tp, "?")),
                        str(ends.get(tp, "?")),
                    )
                )
        print_table(rows)
        for t in topics:
            if t.configs:
                print(f"{t.name} configs: " + ", ".join(f"{k}={v}" for k, v in t.configs.items()))
        return 0

    return run_async(main)


def run_delete(args: argparse.Namespace) -> int:
    async def main() -> int:
        async with Admin(args.bootstrap) as admin:
            await admin.delete_topics(args.names)
        print("deleted " + ", ".join(args.names))
        return 0

    return run_async(main)


def print_table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
