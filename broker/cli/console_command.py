"""``rillet produce`` (stdin lines -> records) and ``rillet consume`` (records -> stdout)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import trio

from rillet.broker.cli.common import add_bootstrap, run_async
from rillet.client import Admin, Consumer, Producer, TopicPartition


def register(sub: Any) -> None:
    produce = sub.add_parser("produce", help="send stdin lines as records")
    produce.add_argument("topic")
    produce.add_argument("--key-separator", help="split each line into KEY<sep>VALUE")
    produce.add_argument("--acks", default="all", choices=["all", "-1", "0", "1"])
    produce.add_argument("--partition", type=int)
    produce.add_argument("--header", action="append", default=[], metavar="KEY=VALUE")
    produce.add_argument("--linger-ms", type=int, default=5)
    add_bootstrap(produce)
    produce.set_defaults(run=run_produce)

    consume = sub.add_parser("consume", help="print records to stdout")
    consume.add_argument("topic")
    start = consume.add_mutually_exclusive_group()
    start.add_argument("--from-beginning", action="store_true")
    start.add_argument("--offset", type=int, help="start offset (needs --partition)")
    consume.add_argument("--partition", type=int)
    consume.add_argument("--max-messages", type=int)
    consume.add_argument(
        "--timeout-ms", type=int, help="exit after this long with no new record (default: never)"
    )
    consume.add_argument("--print-key", action="store_true")
    consume.add_argument("--print-offset", action="store_true")
    consume.add_argument("--key-separator", default="\t")
    add_bootstrap(consume)
    consume.set_defaults(run=run_consume)


def run_produce(args: argparse.Namespace) -> int:
    headers = []
    for item in args.header:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"error: --header expects KEY=VALUE, got {item!r}")
        headers.append((key, value.encode()))

    async def main() -> int:
        count = 0
        started = time.perf_counter()
        async with Producer(args.bootstrap, acks=args.acks, linger_ms=args.linger_ms) as producer:
            futures = []
            for raw in sys.stdin.buffer:
                line = raw.rstrip(b"\r\n")
                key = None
                if args.key_separator:
                    k, sep, v = line.partition(args.key_separator.encode())
                    if sep:
                        key, line = k, v
                futures.append(
                    await producer.send(
                        args.topic, line, key=key, headers=headers or None, partition=args.partition
                    )
                )
                count += 1
            await producer.flush()
            for fut in futures:
                await fut  # raises the first delivery error
        elapsed = time.perf_counter() - started
        print(f"produced {count} records to {args.topic} in {elapsed:.2f}s", file=sys.stderr)
        return 0

    return run_async(main)


def run_consume(args: argparse.Namespace) -> int:
    if args.offset is not None and args.partition is None:
        raise SystemExit("error: --offset needs --partition")

    async def main() -> int:
        async with Admin(args.bootstrap) as admin:
            (description,) = await admin.describe_topics([args.topic])
        partitions = [p.partition for p in description.partitions]
        if args.partition is not None:
            partitions = [args.partition]
        tps = [TopicPartition(args.topic, p) for p in partitions]
        seen = 0
        out = sys.stdout
        async with Consumer(args.bootstrap, fetch_max_wait_ms=200) as consumer:
            consumer.assign(tps)
            if args.offset is not None:
                consumer.seek(tps[0], args.offset)
            elif args.from_beginning:
                await consumer.seek_to_beginning(*tps)
            else:
                await consumer.seek_to_end(*tps)
            idle_since = trio.current_time()
            while args.max_messages is None or seen < args.max_messages:
                records = await consumer.poll(timeout_ms=200)
                if not records:
                    idle = (trio.current_time() - idle_since) * 1000
                    if args.timeout_ms is not None and idle >= args.timeout_ms:
                        break
                    continue
                idle_since = trio.current_time()
                for r in records:
                    if args.max_messages is not None and seen >= args.max_messages:
                        break
                    parts = []
                    if args.print_offset:
                        parts.append(f"{r.partition}:{r.offset}")
                    if args.print_key:
                        parts.append("" if r.key is None else r.key.decode(errors="replace"))
                    parts.append("" if r.value is None else r.value.decode(errors="replace"))
                    out.write(args.key_separator.join(parts) + "\n")
                    seen += 1
                out.flush()
        print(f"consumed {seen} records", file=sys.stderr)
        return 0

    return run_async(main)
